"""``memvault db up | down | status | url | psql | replica | dump | restore``: the embedded PostgreSQL (and its
standbys), or MEMVAULT_DATABASE_URL."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path


def add_commands(sub: argparse._SubParsersAction) -> None:
    db = sub.add_parser(
        "db",
        help="the PostgreSQL 17 server with pgvector and AGE",
        description="Manage the embedded PostgreSQL cluster, or check MEMVAULT_DATABASE_URL.",
    )
    actions = db.add_subparsers(dest="db_command", required=True, metavar="ACTION")
    for name, func, text in (
        ("up", _up, "set up and start the server (idempotent); prints the URL last"),
        ("down", _down, "stop the embedded server cleanly (data is kept)"),
        ("status", _status, "running or not, URL, server and extension versions (exit 3: stopped)"),
    ):
        actions.add_parser(name, help=text).set_defaults(func=func)
    url = actions.add_parser("url", help="print only the connection URL (the tables' owner's; --service: the "
                             "role the API and the worker log in as)")
    url.add_argument("--service", action="store_true",
                     help="memvault_service's URL (not a superuser, no BYPASSRLS: sees a vault only with its "
                     "memvault.vault_id set)")
    url.set_defaults(func=_url)
    # '+' as prefix: every argument, options included, goes to psql (`memvault db psql -c 'select 1'`)
    psql = actions.add_parser(
        "psql", help="run psql on the database (arguments go to psql)", prefix_chars="+", add_help=False
    )
    psql.add_argument("args", nargs=argparse.REMAINDER)
    psql.set_defaults(func=_psql)
    replica = actions.add_parser("replica", help="streaming standbys of the embedded cluster, which serve recall "
                                 "and the read-only routes (MEMVAULT_REPLICA_URLS)")
    replica_actions = replica.add_subparsers(dest="replica_command", required=True, metavar="ACTION")
    replica_actions.add_parser("add", help="copy the embedded cluster into a new hot standby (pg_basebackup -R), "
                               "start it; prints its URL last").set_defaults(func=_replica_add)
    replica_actions.add_parser("list", help="each standby's name, URL and whether it runs").set_defaults(
        func=_replica_list)
    remove = replica_actions.add_parser("remove", help="stop a standby, drop its replication slot, delete it")
    remove.add_argument("name", help="as `memvault db replica list` shows it (standby1, ...)")
    remove.set_defaults(func=_replica_remove)
    stats = actions.add_parser("stats", help="vacuum and bloat per table and index, and the log partitions")
    stats.add_argument("--top", type=int, default=15, metavar="N", help="largest N tables and indexes (default 15)")
    stats.add_argument("--json", action="store_true", help="everything, as JSON")
    stats.set_defaults(func=_stats)
    dump = actions.add_parser("dump", help="pg_dump -Fc of the whole database (graphs, jobs and logs included)")
    dump.add_argument("-o", "--output", type=Path, required=True, metavar="FILE")
    dump.set_defaults(func=_dump)
    restore = actions.add_parser("restore", help="pg_restore a dump into a new database on the same server "
                                                 "(then point MEMVAULT_DB_NAME or the URL at it)")
    restore.add_argument("file", type=Path)
    restore.add_argument("--db", required=True, metavar="NAME", help="the new database (must not exist)")
    restore.set_defaults(func=_restore)


def _settings():
    from app.settings import get_settings

    return get_settings()


def _say(message: str) -> None:
    print(message, flush=True)


def _up(args: argparse.Namespace) -> int:
    from app.db.provision import ensure_server
    from app.db.standby import start_standbys

    url = ensure_server(_settings(), progress=_say).url
    start_standbys(_settings(), progress=_say)
    print(url)
    return 0


def _replica_add(args: argparse.Namespace) -> int:
    from app.db.standby import add_standby, standby_urls

    url = add_standby(_settings(), progress=_say)
    urls = ",".join(u for _, u, _ in standby_urls(_settings()))
    _say(f"the API reads from it with MEMVAULT_REPLICA_URLS={urls} (then restart `memvault serve`)")
    print(url)
    return 0


def _replica_list(args: argparse.Namespace) -> int:
    from app.db.standby import standby_urls

    rows = standby_urls(_settings())
    for name, url, running in rows:
        print(f"{name}\t{'running' if running else 'stopped'}\t{url}")
    if not rows:
        _say("no standbys: `memvault db replica add` sets one up")
    return 0


def _replica_remove(args: argparse.Namespace) -> int:
    from app.db.standby import remove_standby

    remove_standby(_settings(), args.name, progress=_say)
    return 0


def _down(args: argparse.Namespace) -> int:
    from app.db.provision import stop_server

    stop_server(_settings(), progress=_say)
    return 0


def _status(args: argparse.Namespace) -> int:
    from app.db.provision import server_status

    settings = _settings()
    st = server_status(settings)
    if st.embedded and st.mode is None:
        print(f"no embedded cluster in {settings.data_dir} yet: `memvault db up` sets one up there (or set "
              "MEMVAULT_DATABASE_URL to a PostgreSQL 17 server with pgvector and AGE)")
        return 3
    where = "external server (MEMVAULT_DATABASE_URL)" if not st.embedded else f"embedded cluster ({st.mode})"
    print(f"{where}: {'running' if st.running else 'stopped'}" + (f", pid {st.pid}" if st.pid else ""))
    rows = [
        ("url", st.url),
        ("server", f"PostgreSQL {st.version}" if st.version else None),
        ("vector", st.extensions.get("vector")),
        ("age", st.extensions.get("age")),
        ("data", str(st.pgdata) if st.pgdata else None),
        ("note", st.note or None),
    ]
    for key, value in rows:
        if value:
            print(f"  {key + ':':8}{value}")
    return 0 if st.running else 3


def _url(args: argparse.Namespace) -> int:
    from app.db.provision import server_url
    from app.services import service_url

    settings = _settings()
    owner = server_url(settings)
    print(service_url(settings, owner) if args.service else owner)
    return 0


def _psql(args: argparse.Namespace) -> int:
    from app.db.provision import server_status, server_url

    settings = _settings()
    url = server_url(settings)
    extra = args.args[1:] if args.args[:1] == ["--"] else args.args
    client = shutil.which("psql")
    if client:
        argv = [client, url, *extra]
    else:  # no client on the host: the one inside the root filesystem
        from app.db.cluster import client_argv
        from app.db.rootfs import chroot_env

        status = server_status(settings)
        inside = client_argv(status.mode, status.rootfs, "psql")
        if inside is None:
            print("memvault: psql is not installed; install the PostgreSQL client (psql)", file=sys.stderr)
            return 1
        os.environ.clear()
        os.environ.update(chroot_env())
        argv = [*inside, url, *extra]
    sys.stdout.flush()
    os.execvp(argv[0], argv)
    return 1  # not reached


def _stats(args: argparse.Namespace) -> int:
    import json

    from app.db.stats import collect, render
    from app.services import database_url

    stats = collect(database_url(_settings()))
    print(json.dumps(stats, indent=2, default=str) if args.json else render(stats, top=args.top))
    return 0


def _dump(args: argparse.Namespace) -> int:
    from app.db.backup import dump
    from app.services import database_url

    settings = _settings()
    size = dump(settings, database_url(settings), args.output)
    print(f"dumped to {args.output} ({size / 1e6:.1f} MB); restore with `memvault db restore {args.output} --db NAME`")
    return 0


def _restore(args: argparse.Namespace) -> int:
    from app.db.backup import restore
    from app.services import database_url

    settings = _settings()
    url = restore(settings, args.file, database_url(settings), args.db)
    print(f"restored into {url}")
    return 0
