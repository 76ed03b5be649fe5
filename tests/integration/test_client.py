"""``app.client`` against the API served for real (uvicorn on a loopback port, logged in as the service's role):
every operation of the blocking client, the asyncio client on the same calls, errors raised as the service's own
classes, and a resend after a 503 once the database is back (a proxy between the API and PostgreSQL is cut)."""

from __future__ import annotations

import threading
from urllib.parse import urlsplit

import pytest

from app import errors
from app.api.schemas import Page, VaultOut
from app.client import AsyncMemVault, MemVault
from app.read.schemas import RecallOut
from app.write.schemas import CloseOut, ItemOut, TurnsOut
from tests.fakes.live_server import live_api
from tests.fakes.tcp_proxy import TcpProxy


@pytest.fixture
def api(test_settings, service_db_url, admin_key):
    with live_api(test_settings, service_db_url) as base:
        yield base


def test_every_operation_of_the_blocking_client(api, admin_key) -> None:
    with MemVault(api, admin_key) as mv:
        vault = mv.create_vault("alice")
        assert isinstance(vault, VaultOut) and vault.name == "alice"
        assert mv.vault("alice").id == vault.id
        page = mv.vaults()
        assert isinstance(page, Page) and [v.name for v in page.items] == ["alice"] and page.next_cursor is None

        turns = mv.append_turns("alice", "s1", [{"role": "user", "content": "I moved to Tainan last week; my "
                                                                             "dentist is Dr. Lin."}])
        assert isinstance(turns, TurnsOut) and turns.session_id == "s1" and len(turns.turn_ids) == 1
        closed = mv.close_session("alice", "s1")
        assert isinstance(closed, CloseOut) and closed.units
        assert [s.id for s in mv.sessions("alice").items] == ["s1"]
        assert [t.content for t in mv.turns("alice", "s1").items] == [
            "I moved to Tainan last week; my dentist is Dr. Lin."]

        item = mv.remember("alice", "I prefer window seats on long flights.", category="Preference")
        assert isinstance(item, ItemOut) and item.decision == "CREATE" and item.block_id
        found = mv.recall("alice", "which seat do I like on a plane?", k=3)
        assert isinstance(found, RecallOut) and found.cards[0]["id"] == item.block_id
        assert mv.feedback("alice", item.block_id, "+").feedback_up == 1
        assert mv.memory("alice", item.block_id).content == "I prefer window seats on long flights."
        assert item.block_id in [m.id for m in mv.memories("alice", category="Preference").items]

        records = mv.export("alice")
        assert records[0]["type"] == "header" and records[0]["vault"] == "alice" and records[-1]["type"] == "end"
        assert any("window seats" in str(r.get("content")) for r in records if r["type"] == "block")

        mv.forget("alice", item.block_id)
        assert item.block_id not in [c["id"] for c in mv.recall("alice", "which seat do I like?").cards]
        with pytest.raises(errors.NotFound) as lost:
            mv.forget("alice", item.block_id)
        assert "404 on DELETE" in lost.value.message

        with pytest.raises(errors.NotFound) as unknown:
            mv.vault("nobody")
        assert unknown.value.hint  # the API's own hint comes along
        with pytest.raises(errors.Conflict):
            mv.create_vault("alice")
        with pytest.raises(errors.InvalidInput) as bad:
            mv.memories("alice", limit=100000)
        assert bad.value.fields
        mv.delete_vault("alice")
        with pytest.raises(errors.Gone):
            mv.recall("alice", "anything")


def test_a_wrong_key_is_unauthorized(api) -> None:
    with MemVault(api, "mvk_wrong_aaaaaaaaaaaaaaaaaaaaaaaa") as mv, pytest.raises(errors.Unauthorized):
        mv.vaults()


async def test_the_asyncio_client(api, admin_key, services) -> None:
    from app.vaults import get_vault
    from app.write.graph import GraphBuild

    async with AsyncMemVault(api, admin_key) as mv:
        assert (await mv.create_vault("bob")).name == "bob"
        item = await mv.remember("bob", "My sister Wen lives in Kaohsiung.")
        assert item.decision == "CREATE"
        found = await mv.recall("bob", "where does my sister live?")
        assert found.cards[0]["id"] == item.block_id
        assert (await mv.feedback("bob", item.block_id, "-")).feedback_down == 1
        with pytest.raises(errors.NotFound):
            await mv.memory("bob", 999999)
        await GraphBuild(services).run((await get_vault(services.db, "bob")).id, [item.block_id])  # the worker's job
        entities = (await mv.entities("bob")).items
        assert "Wen" in [e.name for e in entities]
        around = await mv.neighbourhood("bob", "Wen", hops=2)
        assert around.entity.name == "Wen" and around.relations


def test_a_503_is_resent_after_its_retry_after(test_settings, db_url, service_db_url, admin_key) -> None:
    parts = urlsplit(db_url)
    with TcpProxy(parts.hostname or "127.0.0.1", parts.port or 5432) as proxy:
        settings = test_settings.model_copy(update={"pool_timeout_s": 1.0})
        with live_api(settings, proxy.rewrite(service_db_url)) as base:
            with MemVault(base, admin_key, retries=0) as once:
                once.create_vault("carol")
                proxy.cut()
                with pytest.raises(errors.DatabaseUnavailable):  # no resend: the 503 itself
                    once.remember("carol", "The office moved to the 12th floor.")
            timer = threading.Timer(1.5, proxy.restore)  # the database comes back during the first wait
            timer.start()
            try:
                with MemVault(base, admin_key, retries=5, max_wait=3) as mv:
                    item = mv.remember("carol", "The office moved to the 12th floor.")
            finally:
                timer.cancel()
            assert item.decision == "CREATE"  # the write is in, once
            with MemVault(base, admin_key) as mv:
                assert [m.id for m in mv.memories("carol").items] == [item.block_id]
