"""The Procrastinate worker runs the jobs the write track queued in its transaction, logged in as `memvault serve`'s
worker is: memvault_service (``api_services``, ``service_db_url``)."""

from __future__ import annotations

from datetime import UTC, datetime

from app.write.items import WriteItem
from app.write.pipeline import WriteTrack


async def test_worker_drains_graph_jobs(services, api_services, vault, service_db_url) -> None:
    from app.worker.app import app as jobs_app
    from app.worker.app import connector_for
    from app.worker.context import worker_context

    at = datetime(2026, 3, 9, tzinfo=UTC)
    await WriteTrack(services).remember(vault, [WriteItem("Alice works at Acme Corporation", at),
                                                WriteItem("Alice lives in Lisbon", at)])
    with jobs_app.replace_connector(connector_for(service_db_url)) as worker_app:
        async with worker_app.open_async():
            await worker_app.run_worker_async(queues=["graph"], wait=False, install_signal_handlers=False,
                                                additional_context=worker_context(api_services))
    job = await services.db.fetchone("SELECT status FROM public.procrastinate_jobs WHERE task_name = 'build_graph'")
    assert job["status"] == "succeeded"
    n = await services.db.fetchone("SELECT count(*) AS n FROM memvault.triple")
    assert n["n"] >= 2


async def test_worker_recounts_lexeme_stats(services, api_services, vault, service_db_url) -> None:
    from app.background.lexeme_stats import refresh_lexeme_stats
    from app.worker.app import app as jobs_app
    from app.worker.app import connector_for
    from app.worker.context import worker_context
    from tests.integration.read_helpers import put_blocks

    await put_blocks(services, vault, [f"Piano lesson number {i}" for i in range(25)])
    with jobs_app.replace_connector(connector_for(service_db_url)) as worker_app:
        async with worker_app.open_async():
            await refresh_lexeme_stats.configure(app=worker_app).defer_async(timestamp=0)
            await worker_app.run_worker_async(queues=["maintenance"], wait=False, install_signal_handlers=False,
                                                additional_context=worker_context(api_services))
    state = await services.db.fetchone("SELECT blocks, lexemes FROM memvault.lexeme_stats_state WHERE vault_id = %s",
                                       (vault.id,), vault_id=vault.id)
    piano = await services.db.fetchone(
        "SELECT ndoc FROM memvault.lexeme_stats WHERE vault_id = %s AND lexeme = 'piano'", (vault.id,),
        vault_id=vault.id)
    assert state["blocks"] == 25 and state["lexemes"] >= 3 and piano["ndoc"] == 25
