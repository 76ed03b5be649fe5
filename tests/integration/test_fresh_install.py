"""A user's first run, on a cluster that has never seen the project: `memvault db up`, `memvault migrate` and
`memvault serve --local-key` (what `make serve` runs), then the README's first requests. And the same after an
upgrade from the oldest revision with data in it.

Roles are cluster-wide: on the long-lived cluster of a developer or of CI, a role an earlier run created hides a
migration that needs it before creating it (revision 0018 granted to memvault_service, which 0023 creates). So these
tests never use the shared server: each starts a brand-new cluster (``fresh_cluster``) and first checks that it holds
no memvault role at all.

The privileges each role ends with are compared with tests/fixtures/privileges.txt, so a change to who may do what
shows up in review; MEMVAULT_GOLDEN_UPDATE=1 rewrites the file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import psycopg
import pytest

from app.bench.runtime import serve_process
from tests.fakes.live_server import wait_serving

SNAPSHOT = Path(__file__).resolve().parents[1] / "fixtures" / "privileges.txt"

# Who may do what, from the catalogs (not information_schema, which shows only what the current role may see):
# role attributes and memberships, schema and table privileges (partitions by month left out: their names move),
# and each function's EXECUTE grants beyond the owner (NULL acl: PostgreSQL's default, PUBLIC may execute).
PRIVILEGES = """
WITH roles AS (SELECT oid, rolname FROM pg_roles WHERE rolname LIKE 'memvault%' OR rolname = 'postgres')
SELECT 'role ' || r.rolname || ' ' || concat_ws(',', CASE WHEN r.rolsuper THEN 'superuser' END,
       CASE WHEN r.rolcanlogin THEN 'login' END, CASE WHEN r.rolbypassrls THEN 'bypassrls' END,
       CASE WHEN r.rolcreatedb THEN 'createdb' END, CASE WHEN r.rolcreaterole THEN 'createrole' END,
       CASE WHEN r.rolinherit THEN 'inherit' END)
  FROM pg_roles r WHERE r.rolname LIKE 'memvault%'
UNION ALL
SELECT 'member ' || m.rolname || ' of ' || g.rolname
  FROM pg_auth_members a JOIN pg_roles m ON m.oid = a.member JOIN pg_roles g ON g.oid = a.roleid
 WHERE m.rolname LIKE 'memvault%'
UNION ALL
SELECT 'database ' || coalesce(r.rolname, 'PUBLIC') || ' ' || string_agg(a.privilege_type, ',' ORDER BY 1)
  FROM pg_database d, aclexplode(d.datacl) a LEFT JOIN roles r ON r.oid = a.grantee
 WHERE d.datname = current_database() AND (a.grantee = 0 OR r.rolname LIKE 'memvault%')
 GROUP BY r.rolname
UNION ALL
SELECT 'schema ' || n.nspname || ' ' || coalesce(r.rolname, 'PUBLIC') || ' '
       || string_agg(a.privilege_type, ',' ORDER BY a.privilege_type)
  FROM pg_namespace n, aclexplode(n.nspacl) a LEFT JOIN roles r ON r.oid = a.grantee
 WHERE n.nspname IN ('memvault', 'public') AND (a.grantee = 0 OR r.rolname LIKE 'memvault%')
 GROUP BY n.nspname, r.rolname
UNION ALL
SELECT 'table ' || c.oid::regclass::text || ' ' || coalesce(r.rolname, 'PUBLIC') || ' '
       || string_agg(a.privilege_type, ',' ORDER BY a.privilege_type)
       || CASE WHEN c.relrowsecurity THEN ' rls' ELSE '' END || CASE WHEN c.relforcerowsecurity THEN ' forced' ELSE '' END
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace, aclexplode(c.relacl) a
  LEFT JOIN roles r ON r.oid = a.grantee
 WHERE n.nspname IN ('memvault', 'public') AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f') AND NOT c.relispartition
   AND (a.grantee = 0 OR r.rolname LIKE 'memvault%')
 GROUP BY c.oid, r.rolname
UNION ALL
SELECT 'function ' || p.oid::regprocedure::text || ' '
       || CASE WHEN p.proacl IS NULL THEN 'PUBLIC'
               ELSE coalesce((SELECT string_agg(coalesce(r.rolname, 'PUBLIC'), ',' ORDER BY 1)
                                FROM aclexplode(p.proacl) a LEFT JOIN roles r ON r.oid = a.grantee
                               WHERE a.grantee <> p.proowner), '-') END
       || CASE WHEN p.prosecdef THEN ' security-definer' ELSE '' END
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'memvault'
ORDER BY 1
"""


def _memvault(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "app.cli", *args], env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)
    assert done.returncode == 0, f"memvault {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


def _db_up(env: dict[str, str]) -> str:
    """`memvault db up` on the brand-new cluster; its URL, after checking it holds no memvault role."""
    url = _memvault(env, "db", "up").stdout.strip().splitlines()[-1]
    assert url.startswith("postgresql://")
    with psycopg.connect(url) as conn:
        roles = [r[0] for r in conn.execute("SELECT rolname FROM pg_roles WHERE rolname LIKE 'memvault%'")]
    assert roles == [], f"not a brand-new cluster: it already has {roles}"
    return url


def _serve_and_use(env: dict[str, str], tmp_path: Path, *, vault: str, old_turn: str | None = None) -> None:
    """`memvault serve --local-key` as `make serve` runs it, then the README's first requests with the key it
    printed: /health, a vault (or the existing one, whose session s1 holds ``old_turn``), a write, a recall that
    finds it."""
    with serve_process(env, tmp_path / "serve.log", "--local-key") as (server, base):
        key_file = Path(env["MEMVAULT_DATA_DIR"]) / "api_key"
        with httpx.Client(base_url=base, timeout=30) as http:
            wait_serving(http, server, tmp_path / "serve.log", key_file=key_file)
            assert oct(key_file.stat().st_mode & 0o777) == "0o600"
            http.headers["Authorization"] = f"Bearer {key_file.read_text().strip()}"
            if old_turn is None:
                assert http.post("/v1/vaults", json={"name": vault}).status_code == 201
            else:
                turns = http.get(f"/v1/vaults/{vault}/sessions/s1/turns")
                assert turns.status_code == 200, turns.text
                assert old_turn in turns.text
            r = http.post(f"/v1/vaults/{vault}/memories",
                          json={"content": "I moved to Tainan last week; my dentist is Dr. Lin."})
            assert r.status_code == 200, r.text
            r = http.post(f"/v1/vaults/{vault}/recall", json={"query": "where do I live now?"})
            assert r.status_code == 200, r.text
            assert "Tainan" in json.dumps(r.json())


def _privileges(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [row[0] for row in conn.execute(PRIVILEGES)]


@pytest.mark.timeout(600)
def test_a_brand_new_cluster_installs_serves_and_answers(fresh_cluster: dict[str, str], tmp_path: Path) -> None:
    """Fails on 1c05130 (the main before revision 0018 stopped applying the idempotent layer): `memvault migrate`
    stops with 'role "memvault_service" does not exist'."""
    url = _db_up(fresh_cluster)
    _memvault(fresh_cluster, "migrate")
    privileges = _privileges(url)
    if os.environ.get("MEMVAULT_GOLDEN_UPDATE") == "1":
        SNAPSHOT.write_text("\n".join(privileges) + "\n", encoding="utf-8")
    expected = SNAPSHOT.read_text(encoding="utf-8").splitlines()
    assert privileges == expected, (
        "the roles' privileges changed; if that is meant, rewrite tests/fixtures/privileges.txt "
        "(MEMVAULT_GOLDEN_UPDATE=1) and let review see the diff:\n"
        + "\n".join(f"- {line}" for line in sorted(set(expected) - set(privileges)))
        + "\n" + "\n".join(f"+ {line}" for line in sorted(set(privileges) - set(expected))))
    _serve_and_use(fresh_cluster, tmp_path, vault="alice")


@pytest.mark.timeout(600)
def test_an_upgrade_from_the_oldest_revision_keeps_its_data(fresh_cluster: dict[str, str], tmp_path: Path) -> None:
    """A database made by the first revision, with a vault, its graph and a conversation in it, upgraded to head
    on a brand-new cluster by `make serve`'s own steps; then served: the old conversation is there and the vault
    takes new memories and recalls them."""
    from app.db.migrate import head_revision, upgrade

    url = _db_up(fresh_cluster)
    upgrade(url, "0001")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("LOAD 'age'")
        conn.execute("SELECT ag_catalog.create_graph('vg_old_vault')")
        vault_id = conn.execute("INSERT INTO memvault.vault (name, graph_name) VALUES ('old', 'vg_old_vault') "
                                "RETURNING id").fetchone()[0]
        conn.execute("INSERT INTO memvault.session (vault_id, id, started_at, last_turn_at) "
                     "VALUES (%s, 's1', now(), now())", (vault_id,))
        conn.execute("INSERT INTO memvault.turn (vault_id, session_id, seq, role, content, said_at) "
                     "VALUES (%s, 's1', 1, 'user', 'My sister Wen lives in Kaohsiung.', now())", (vault_id,))
    _memvault(fresh_cluster, "migrate")
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT version_num FROM memvault.alembic_version").fetchone()[0] == head_revision()
    _serve_and_use(fresh_cluster, tmp_path, vault="old", old_turn="My sister Wen lives in Kaohsiung.")


def test_what_an_interrupted_run_left_is_removed_by_the_next(server_url: str, test_settings) -> None:
    """A killed `make test` leaves its template, its test databases and its throwaway clusters; each carries the
    run's pid, and the next run removes those whose pid is gone (a run going on beside it keeps its own)."""
    from tests.conftest import CLUSTER_MARK, _remove_leftovers

    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid that no process has now
    alive = os.getppid()
    names = [f"mv_test_{gone.pid}_left", f"memvault_tmpl_{gone.pid}", f"mv_test_{alive}_kept"]
    with psycopg.connect(server_url, autocommit=True) as conn:
        for name in names:
            conn.execute(f'CREATE DATABASE "{name}"')
        conn.execute(f'ALTER DATABASE "memvault_tmpl_{gone.pid}" WITH is_template = true')
    from app.db.provision import server_status

    rootfs = server_status(test_settings).rootfs
    left = rootfs / "srv/memvault/clusters" / f"left-{gone.pid}" if rootfs else None
    if left is not None:
        left.mkdir(parents=True)
        (left / CLUSTER_MARK).write_text(f"{gone.pid} /nonexistent/data\n")
    try:
        removed = _remove_leftovers(server_url, test_settings)
        assert f"database mv_test_{gone.pid}_left" in removed and f"database memvault_tmpl_{gone.pid}" in removed
        with psycopg.connect(server_url) as conn:
            present = {r[0] for r in conn.execute("SELECT datname FROM pg_database")}
        assert f"mv_test_{alive}_kept" in present and not {names[0], names[1]} & present
        if left is not None:
            assert not left.exists() and f"cluster left-{gone.pid}" in removed
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            for name in names:
                if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
                    conn.execute(f'ALTER DATABASE "{name}" WITH is_template = false')
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
