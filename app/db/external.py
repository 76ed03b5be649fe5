"""An external server (``MEMVAULT_DATABASE_URL``) made ready by `memvault db up`: the database and both extensions
created when the URL's role may create them, and otherwise the exact SQL an administrator must run, printed ready
to paste into psql as a superuser.

What a role may do is read from the catalogs first (CREATEDB, superuser), so nothing is half-done: either every
missing piece is created, or nothing is and the error lists them all.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from app.errors import DatabaseUnavailable, ProvisionError

_PRELOAD = "age"


def _with_db(url: str, dbname: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{dbname}"))


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def prepare(url: str, *, required: tuple[str, ...], progress=print) -> list[str]:
    """Create what is missing at ``url`` (the database, the ``required`` extensions, AGE preloaded for the
    database's sessions) as far as the URL's role may; returns what was created. ProvisionError with the SQL for an
    administrator when something is missing that the role may not create."""
    import psycopg
    from psycopg import sql

    parts = urlsplit(url)
    dbname = parts.path.lstrip("/") or (parts.username or "postgres")
    created: list[str] = []
    admin_sql: list[str] = []
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.OperationalError as exc:
        if 'does not exist' not in str(exc) or f'"{dbname}"' not in str(exc):
            raise DatabaseUnavailable(
                f"cannot connect to MEMVAULT_DATABASE_URL: {str(exc).strip()}",
                hint="check that the server is running and that host, port, user and password are right",
            ) from exc
        conn = None
    if conn is None:  # the database is missing: create it from the maintenance database, if the role may
        with _maintenance(url) as admin:
            user, may_create = admin.execute(
                "SELECT current_user, rolcreatedb OR rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()
            if may_create:
                admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
                created.append(f"database {dbname}")
                progress(f"created the database {dbname}")
            else:
                raise ProvisionError(
                    f"the database {dbname} does not exist, and the role {user} may not create it",
                    hint="ask an administrator to run, in psql as a superuser:\n\n"
                    + _admin_script(dbname, user, list(required), preload=True) + "\nthen run `memvault db up` again")
        conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
    with conn:
        user, is_super = conn.execute(
            "SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()
        preload = _PRELOAD if not is_super else conn.execute(  # only a superuser may read these settings
            "SELECT current_setting('session_preload_libraries') || ',' "
            "|| current_setting('shared_preload_libraries')").fetchone()[0]
        installed = {row[0] for row in conn.execute("SELECT extname FROM pg_extension")}
        available = {row[0] for row in conn.execute("SELECT name FROM pg_available_extensions")}
        unavailable = [ext for ext in required if ext not in available]
        if unavailable:
            return created  # check_server says which is missing and how to install it
        missing = [ext for ext in required if ext not in installed]
        for ext in list(missing):
            try:
                conn.execute(sql.SQL("CREATE EXTENSION IF NOT EXISTS {}").format(sql.Identifier(ext)))
            except psycopg.errors.InsufficientPrivilege:
                continue
            missing.remove(ext)
            created.append(f"extension {ext}")
            progress(f"created the extension {ext} in {dbname}")
        needs_preload = _PRELOAD not in [p.strip() for p in preload.split(",")]
        if needs_preload and is_super:  # the service's role is no superuser: AGE must be loaded for it
            conn.execute(sql.SQL("ALTER DATABASE {} SET session_preload_libraries = {}").format(
                sql.Identifier(dbname), sql.Literal(_PRELOAD)))
            created.append("session_preload_libraries = 'age'")
            progress(f"set session_preload_libraries = 'age' for the database {dbname}")
            needs_preload = False
        if missing or needs_preload:
            admin_sql.append(_admin_script(dbname, user, missing, preload=needs_preload, create_db=False))
    if not is_super:
        progress(f"note: the role {user} is not a superuser; `memvault migrate` creates the roles memvault_app and "
                 "memvault_service and grants on AGE's catalog, so an administrator runs it once with a "
                 "superuser's URL (MEMVAULT_DATABASE_URL=postgresql://postgres@HOST/DB memvault migrate); make sure "
                 "AGE is preloaded for the database's sessions (session_preload_libraries = 'age')")
    if admin_sql:
        raise ProvisionError(
            f"the database {dbname} lacks what the role {user} may not add itself"
            + (f": the extensions {', '.join(missing)}" if missing else "")
            + (" (and AGE is not preloaded for its sessions)" if needs_preload else ""),
            hint="ask an administrator to run, in psql as a superuser:\n\n" + admin_sql[0]
            + "\nthen run `memvault db up` again")
    return created


def _maintenance(url: str):
    import psycopg

    for name in ("postgres", "template1"):
        try:
            return psycopg.connect(_with_db(url, name), autocommit=True, connect_timeout=10)
        except psycopg.OperationalError as exc:
            last = exc
    raise DatabaseUnavailable(f"cannot reach the server's maintenance database: {str(last).strip()}",
                              hint="check MEMVAULT_DATABASE_URL's host, port, user and password")


def _admin_script(dbname: str, owner: str, extensions: list[str], *, preload: bool, create_db: bool = True) -> str:
    lines = []
    if create_db:
        lines.append(f"CREATE DATABASE {_ident(dbname)} OWNER {_ident(owner)};")
    lines.append(f"\\connect {_ident(dbname)}")
    lines += [f"CREATE EXTENSION IF NOT EXISTS {ext};" for ext in extensions]
    if preload:
        lines.append(f"ALTER DATABASE {_ident(dbname)} SET session_preload_libraries = '{_PRELOAD}';")
    return "\n".join("    " + line for line in lines) + "\n"
