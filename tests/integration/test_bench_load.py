"""The open-loop scheduler of `memvault bench load` against a live API (uvicorn on loopback, the test's database):
every scheduled request is sent and answered, and every acknowledged write is a row in the database. No timing
assertions: the rate is low and only the accounting is checked."""

from __future__ import annotations

import httpx
import psycopg

from app.bench.load_live import http_ops, writes_present
from app.bench.openloop import run_step
from tests.fakes.live_server import live_api


async def test_an_open_loop_step_against_a_live_service_accounts_for_every_request(
        api_services, admin_key, db_url) -> None:
    with live_api(api_services.settings, api_services.db.url) as base:
        async with httpx.AsyncClient(base_url=base, timeout=60,
                                     headers={"Authorization": f"Bearer {admin_key}"}) as http:
            (await http.post("/v1/vaults", json={"name": "load-test"})).raise_for_status()
            r = await http.post("/v1/vaults/load-test/memories",
                                json={"items": [{"content": f"Anna keeps {n} red kayaks in Lisbon."}
                                                for n in range(20)]})
            r.raise_for_status()
            step = await run_step(http_ops(http, "load-test"), 4, 2.0, write_share=0.5, seed=11, grace_s=60)
    assert step.scheduled > 0 and step.counts["write"] > 0 and step.counts["recall"] > 0
    assert step.sent == step.scheduled == step.completed
    assert step.unfinished == 0 and step.error_count() == 0, step.summary()
    assert len(step.acked) == step.counts["write"] == len(step.latencies["write"])
    assert len(step.latencies["recall"]) == step.counts["recall"]
    assert await writes_present(db_url, "load-test", step.acked) == len(step.acked)
    # and the rows are the blocks the answers named (read as the owner: the vault's rows, whatever RLS says)
    async with await psycopg.AsyncConnection.connect(db_url) as conn:
        cur = await conn.execute("SELECT count(*) FROM memvault.block b JOIN memvault.vault v ON v.id = b.vault_id "
                                 "WHERE v.name = 'load-test' AND b.id = ANY(%s)", (list(step.acked.values()),))
        assert (await cur.fetchone())[0] == len(set(step.acked.values()))
