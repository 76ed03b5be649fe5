"""Row-level security, proven from the real ``psql`` logged in as the role the service logs in as
(``memvault_service``, which `memvault serve`, its worker and the test fixtures use): it is no superuser, bypasses
nothing, owns nothing and cannot become anyone who does (RESET ROLE, SET ROLE, SET SESSION AUTHORIZATION); with no
vault set it sees no vault's rows; with the transaction's vault set to A (as ``memvault_app``, as every request
does) it sees none of vault B's rows in any vault table or in B's graph and cannot write into B; it cannot change
audit_log, read API key hashes, switch row security off or alter a table."""

from __future__ import annotations

import shutil
import subprocess
from datetime import UTC, datetime

import psycopg
import pytest

from app.vaults import create_vault
from app.write.items import WriteItem

PSQL = shutil.which("psql")
# Tables without vault_id that memvault_app may read: shared, not any vault's data (the dream's reference data:
# canonical predicate definitions and the entity-type affinity prior, the predicate aliases the normalizer maps).
SHARED = {"embedder_config", "intent_archetype", "vault", "canonical_predicate", "type_affinity",
          "predicate_alias"}

pytestmark = pytest.mark.skipif(PSQL is None, reason="no psql client on this machine")


def vault_tables(conn: psycopg.Connection) -> list[str]:
    """Every table of the memvault schema with a vault_id column that memvault_app may read (partitions are reached
    through their parent; api_key, which it may not read at all, is checked on its own)."""
    return [r[0] for r in conn.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'vault_id' AND NOT a.attisdropped "
        "WHERE n.nspname = 'memvault' AND c.relkind IN ('r', 'p', 'u') AND NOT c.relispartition "
        "AND has_table_privilege('memvault_app', c.oid, 'SELECT') ORDER BY 1")]


async def fill(services, vault) -> None:
    """Rows of this vault in as many tables as the tracks write: turns and chunks, a memory and its retraction
    (history), sources, audit, a recall (recall_log, usage), the graph (entities, triples, AGE vertices)."""
    from app.read.config import RecallOptions
    from app.read.recall import recall
    from app.write.graph import GraphBuild
    from app.write.memories import retract_memory
    from app.write.pipeline import WriteTrack
    from app.write.sessions import SessionTrack, TurnIn

    now = datetime.now(UTC)
    await SessionTrack(services).append_turns(vault, "s1", [
        TurnIn("user", f"Alice works at Acme in {vault.name}; she moved to Tainan.", now)])
    kept, gone = await WriteTrack(services).remember(vault, [
        WriteItem(content="Alice works at Acme Corporation", said_at=now, source_kind="user"),
        WriteItem(content=f"Carol prefers oolong tea in the mornings ({vault.name}).", said_at=now,
                  source_kind="user")])
    assert kept.decision == gone.decision == "CREATE", (kept, gone)
    await retract_memory(services, vault, gone.block_id)
    await recall(services, vault, "Where does Alice work?", RecallOptions())
    await GraphBuild(services).run(vault.id, [kept.block_id])


def _psql(url: str, script: str) -> subprocess.CompletedProcess:
    return subprocess.run([PSQL, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=0", url], input=script,
                          capture_output=True, text=True, timeout=60, check=False)


async def test_the_service_login_sees_and_writes_only_its_vault(services, db_url, service_db_url) -> None:
    a = await create_vault(services.db, "vault-a")
    b = await create_vault(services.db, "vault-b")
    await fill(services, a)
    await fill(services, b)
    with psycopg.connect(db_url, autocommit=True) as owner:
        tables = vault_tables(owner)
        assert {"block", "turn", "audit_log", "entity", "triple", "block_rail2", "lexeme_stats",
                "graph_centrality_state"} <= set(tables)
        of_b = {t: owner.execute(f"SELECT count(*) FROM memvault.{t} WHERE vault_id = %s", (b.id,)).fetchone()[0]
                for t in tables}
        of_a = {t: owner.execute(f"SELECT count(*) FROM memvault.{t} WHERE vault_id = %s", (a.id,)).fetchone()[0]
                for t in tables}
        for t in ("block", "block_history", "block_source", "session", "turn", "audit_log", "recall_log",
                  "entity", "triple"):
            assert of_b[t] > 0, f"the test should give vault B rows in {t}"
        b_vertices = owner.execute(f'SELECT count(*) FROM {b.graph_name}."Entity"').fetchone()[0]
        assert b_vertices > 0
        super_role = owner.execute("SELECT rolname FROM pg_roles WHERE rolsuper ORDER BY oid LIMIT 1").fetchone()[0]
        table_owner = owner.execute("SELECT relowner::regrole::text FROM pg_class "
                                    "WHERE oid = 'memvault.block'::regclass").fetchone()[0]
    bare = "\n".join(f"SELECT 'bare_{t}', count(*) FROM memvault.{t};" for t in tables)
    counts = "\n".join(f"SELECT '{t}', count(*), count(*) FILTER (WHERE vault_id IS DISTINCT FROM '{a.id}') "
                       f"FROM memvault.{t};" for t in tables)
    script = f"""
SELECT 'login', session_user, rolsuper, rolbypassrls, rolcreaterole, rolcreatedb, rolreplication
  FROM pg_roles WHERE rolname = session_user;
SELECT 'owns_any', count(*) FROM pg_class WHERE relowner = session_user::regrole;
SELECT 'member_of_owner', pg_has_role(session_user, '{table_owner}', 'MEMBER');
RESET ROLE;
SELECT 'after_reset', current_user, rolsuper FROM pg_roles WHERE rolname = current_user;
SET ROLE {super_role};
SET SESSION AUTHORIZATION {super_role};
SELECT 'still', current_user, session_user;
{bare}
SELECT 'bare_graph_b', count(*) FROM {b.graph_name}."Entity";
UPDATE memvault.audit_log SET actor = 'someone else';
DELETE FROM memvault.audit_log;
TRUNCATE memvault.audit_log;
ALTER TABLE memvault.block DISABLE ROW LEVEL SECURITY;
SELECT 'residue', count(*) FROM memvault.erasure_residue_v1('Acme');
SELECT 'by_name', name FROM memvault.vault_by_name_v1('vault-b');
BEGIN;
SET LOCAL ROLE memvault_app;
SELECT set_config('memvault.vault_id', '{a.id}', true);
SELECT 'who', rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user;
SELECT 'owns', count(*) FROM pg_class WHERE relowner = 'memvault_app'::regrole;
{counts}
SELECT 'graph_b', count(*) FROM {b.graph_name}."Entity";
SELECT 'graph_b_edges', count(*) FROM {b.graph_name}._ag_label_edge;
SELECT 'graph_a', count(*) FROM {a.graph_name}."Entity";
SELECT 'vaults', string_agg(name, ',') FROM memvault.vault;
COMMIT;
BEGIN; SET LOCAL ROLE memvault_app; SELECT set_config('memvault.vault_id', '{a.id}', true);
INSERT INTO memvault.session (vault_id, id, started_at, last_turn_at) VALUES ('{b.id}', 'intruder', now(), now());
ROLLBACK;
BEGIN; SET LOCAL ROLE memvault_app; SELECT set_config('memvault.vault_id', '{a.id}', true);
UPDATE memvault.block SET content = 'overwritten' WHERE vault_id = '{b.id}';
SELECT 'updated_b', count(*) FROM memvault.block WHERE content = 'overwritten';
ROLLBACK;
BEGIN; SET LOCAL ROLE memvault_app; SELECT set_config('memvault.vault_id', '{a.id}', true);
UPDATE memvault.audit_log SET actor = 'someone else';
ROLLBACK;
BEGIN; SET LOCAL ROLE memvault_app; SELECT set_config('memvault.vault_id', '{a.id}', true);
DELETE FROM memvault.audit_log;
ROLLBACK;
BEGIN; SET LOCAL ROLE memvault_app; SELECT set_config('memvault.vault_id', '{a.id}', true);
SET LOCAL row_security = off;
SELECT 'rls_off', count(*) FROM memvault.block;
ROLLBACK;
BEGIN; SET LOCAL ROLE memvault_app;
SELECT 'api_key', count(*) FROM memvault.api_key;
ROLLBACK;
BEGIN; SET LOCAL ROLE memvault_app; SET LOCAL ROLE postgres;
ROLLBACK;
"""
    proc = _psql(service_db_url, script)
    out = {}
    for line in proc.stdout.splitlines():
        name, _, rest = line.partition("|")
        if rest:
            out[name] = rest
    err = proc.stderr

    # The login itself: an ordinary role that nothing lets out.
    assert out["login"] == "memvault_service|f|f|f|f|f", out["login"]
    assert out["owns_any"] == "0" and out["member_of_owner"] == "f"
    assert out["after_reset"] == "memvault_service|f", "RESET ROLE must lead back to the same ordinary role"
    assert f'permission denied to set role "{super_role}"' in err
    assert "permission denied to set session authorization" in err
    assert out["still"] == "memvault_service|memvault_service"
    # No vault set: not one row of any vault, in any table or graph.
    for t in tables:
        assert out[f"bare_{t}"] == "0", f"{t}: the service's login read rows with no vault set"
    assert out["bare_graph_b"] == "0"
    assert err.count("permission denied for table audit_log") >= 5  # UPDATE, DELETE, TRUNCATE here, 2 below
    assert "must be owner of table block" in err
    assert "permission denied for function erasure_residue_v1" in err and "residue" not in out
    assert out["by_name"] == "vault-b"  # a granted SECURITY DEFINER function: it finds the vault, nothing more

    assert out["who"] == "f|f", "memvault_app must be neither superuser nor BYPASSRLS"
    assert out["owns"] == "0", "memvault_app must own no table"
    for t in tables:
        visible, foreign = out[t].split("|")
        assert foreign == "0", f"{t}: memvault_app saw rows of another vault"
        assert int(visible) == of_a[t], f"{t}: memvault_app must see exactly vault A's rows"
    assert out["graph_b"] == "0" and out["graph_b_edges"] == "0", "vault B's graph must be invisible"
    assert int(out["graph_a"]) > 0
    assert out["vaults"] == "vault-a"
    assert 'new row violates row-level security policy for table "session"' in err
    assert out["updated_b"] == "0"
    assert "permission denied for table audit_log" in err
    assert 'query would be affected by row-level security policy for table "block"' in err
    assert "rls_off" not in out
    assert "permission denied for table api_key" in err
    assert 'permission denied to set role "postgres"' in err


async def test_every_vault_table_forces_row_security(services, db_url) -> None:
    """Catalog check, so a table added by a later migration without its policy fails here."""
    await create_vault(services.db, "graph-check")
    with psycopg.connect(db_url) as conn:
        rows = conn.execute(
            "SELECT n.nspname || '.' || c.relname, c.relrowsecurity, c.relforcerowsecurity, "
            "EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = c.oid AND p.polname = 'vault_isolation'), "
            "EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'vault_id' "
            "        AND NOT a.attisdropped), "
            "has_table_privilege('memvault_app', c.oid, 'SELECT'), c.relname "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind IN ('r', 'p', 'u') AND NOT c.relispartition "
            "AND (n.nspname = 'memvault' OR n.nspname IN (SELECT graph_name FROM memvault.vault))").fetchall()
    in_graphs = [r for r in rows if not r[0].startswith("memvault.")]
    assert in_graphs and all(r[1] and r[2] and r[3] for r in in_graphs), in_graphs
    for name, rls, force, policy, has_vault, readable, rel in rows:
        if has_vault and readable:
            assert rls and force and policy, f"{name} holds vault data without forced row-level security"
        elif readable and name.startswith("memvault."):
            assert rel in SHARED, f"{name}: memvault_app may read it, but it has no vault_id"
