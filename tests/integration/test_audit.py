"""audit_log: every mutation leaves a row with its actor (the API key, a job, a CLI user), action, before and after,
in the mutation's own transaction; nobody can change or remove a row, except erasure's redaction of a purged
vault's content."""

from __future__ import annotations

from types import SimpleNamespace

import psycopg
import pytest

from app.db.connector import act_as, current_actor
from app.vaults import create_vault


def _rows(db_url: str, sql: str, *params) -> list[dict]:
    with psycopg.connect(db_url, row_factory=psycopg.rows.dict_row) as conn:
        return conn.execute(sql, params).fetchall()


async def test_every_mutation_through_the_api_is_audited_as_its_key(client, db_url) -> None:
    key_id = client.headers["Authorization"].split("_")[1]
    actor = f"key:{key_id}"
    assert (await client.post("/v1/vaults", json={"name": "audited"})).status_code == 201
    r = await client.post("/v1/vaults/audited/memories", json={"content": "I live in Taipei and work at Acme."})
    block_id = r.json()["results"][0]["block_id"]
    r = await client.patch(f"/v1/vaults/audited/memories/{block_id}", json={"category": "Decision"})
    assert r.status_code == 200, r.text
    await client.post("/v1/vaults/audited/sessions/s1/turns", json={"turns": [
        {"role": "user", "content": "My sister Mei visits in May."}]})
    assert (await client.post("/v1/vaults/audited/sessions/s1/close")).status_code == 200
    assert (await client.delete(f"/v1/vaults/audited/memories/{block_id}")).status_code in (200, 204)
    made = (await client.post("/v1/keys", json={"scope": "read", "vault": "audited", "name": "ro"})).json()
    assert (await client.delete(f"/v1/keys/{made['id']}")).status_code == 200

    rows = _rows(db_url, "SELECT actor, action, block_id, before, after FROM memvault.audit_log ORDER BY id")
    mine = [r for r in rows if r["actor"] == actor]
    actions = [r["action"] for r in mine]
    for expected in ("vault.create", "block.insert", "write.create", "block.update", "session.append_turns",
                     "session.close", "block.retract", "key.create", "key.revoke"):
        assert expected in actions, f"no {expected} audited as {actor}: {actions}"
    by = {r["action"]: r for r in mine}
    assert by["vault.create"]["after"]["name"] == "audited" and by["vault.create"]["before"] is None
    inserted = [r for r in mine if r["action"] == "block.insert" and r["block_id"] == block_id][0]
    assert inserted["after"]["content"] == "I live in Taipei and work at Acme." and inserted["before"] is None
    update = [r for r in mine if r["action"] == "block.update" and r["block_id"] == block_id][0]
    assert (update["before"]["category"], update["after"]["category"]) != ("Decision", "Decision")
    assert update["after"]["category"] == "Decision"
    retract = by["block.retract"]
    assert retract["before"]["retracted_at"] is None and retract["after"]["retracted_at"] is not None
    close = by["session.close"]
    assert close["before"]["closed_at"] is None and close["after"]["closed_at"] is not None
    assert by["session.append_turns"]["after"]["count"] == 1
    assert by["key.create"]["after"]["scope"] == "read" and "key_hash" not in by["key.create"]["after"]
    assert by["key.revoke"]["before"]["revoked_at"] is None and by["key.revoke"]["after"]["revoked_at"]
    # and nothing of these was audited under another name
    assert not [r for r in rows if r["action"] in ("block.insert", "vault.create") and r["actor"] != actor
                and (r["after"] or {}).get("name") == "audited"]

    assert (await client.delete("/v1/vaults/audited", params={"purge": "true"})).status_code in (200, 204)
    rows = _rows(db_url, "SELECT actor, action, before FROM memvault.audit_log WHERE action IN "
                         "('vault.drop', 'block.delete') ORDER BY id")
    assert {r["action"] for r in rows} == {"vault.drop", "block.delete"} and all(r["actor"] == actor for r in rows)
    dropped = [r for r in rows if r["action"] == "block.delete"][0]["before"]
    assert block_id in dropped["ids"] and "content" not in dropped  # deleting is how content goes away


async def test_jobs_and_the_cli_are_actors_too(services, db_url) -> None:
    from app.worker.app import act_as_job

    async def job() -> None:
        await create_vault(services.db, "made-by-a-job")

    token = current_actor.set(None)
    try:
        await act_as_job(job, SimpleNamespace(job=SimpleNamespace(task_name="build_graph")), None)
        act_as("cli:alice")
        await create_vault(services.db, "made-by-alice")
    finally:
        current_actor.reset(token)
    rows = _rows(db_url, "SELECT actor, after->>'name' AS name FROM memvault.audit_log WHERE action = 'vault.create'")
    assert {(r["name"], r["actor"]) for r in rows} >= {("made-by-a-job", "worker:build_graph"),
                                                       ("made-by-alice", "cli:alice")}


async def test_audit_log_is_append_only_but_for_erasure(services, db_url, vault) -> None:
    other = await create_vault(services.db, "other")
    with psycopg.connect(db_url, autocommit=True) as owner:  # the owner, a superuser: privileges do not stop it
        for statement in ("UPDATE memvault.audit_log SET actor = 'x'", "DELETE FROM memvault.audit_log",
                          "TRUNCATE memvault.audit_log"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
                owner.execute(statement)
        n = owner.execute("SELECT count(*) FROM memvault.audit_log WHERE vault_id = %s", (vault.id,)).fetchone()[0]
        assert n > 0
        # erasure (the purge of vault): only that vault's rows, only their content columns
        with owner.transaction():
            owner.execute("SELECT set_config('memvault.purge_vault', %s, true)", (str(vault.id),))
            done = owner.execute("UPDATE memvault.audit_log SET before = NULL, after = NULL, detail = '{}' "
                                 "WHERE vault_id = %s", (vault.id,)).rowcount
        assert done == n
        for statement, args in (
                ("UPDATE memvault.audit_log SET actor = 'x' WHERE vault_id = %s", (vault.id,)),
                ("UPDATE memvault.audit_log SET after = NULL WHERE vault_id = %s", (other.id,)),
                ("DELETE FROM memvault.audit_log WHERE vault_id = %s", (vault.id,))):
            with pytest.raises(psycopg.errors.InsufficientPrivilege), owner.transaction():
                owner.execute("SELECT set_config('memvault.purge_vault', %s, true)", (str(vault.id),))
                owner.execute(statement, args)
        kept = owner.execute("SELECT count(*), count(after) FROM memvault.audit_log WHERE vault_id = %s",
                             (vault.id,)).fetchone()
        assert kept == (n, 0)
