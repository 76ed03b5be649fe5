"""Recall served by a real hot standby: a throwaway primary (its own data directory, the shared root filesystem)
and a streaming standby of it made by `memvault db replica add` (pg_basebackup -R, same binaries).

Checked: a recall on the standby equals the primary's; a write's X-Memvault-LSN sent back makes the next read see
the write; a position no standby has replayed is served by the primary; the recall log of a standby-served recall
lands on the primary; the AGE graph and a vault's own HNSW index work on the standby; with the standby stopped,
recall still answers (and /health says it is down); the Python client and a hook process send their writes'
position back by themselves, so they read their writes while the standby's replay is paused."""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import psycopg
import pytest

from app.db.replicas import LSN_HEADER, StandbyDatabase, format_lsn, parse_lsn
from app.settings import Settings
from tests.conftest import cli_env, service_login

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pair(test_settings: Settings, server_url: str, tmp_path_factory) -> Iterator[dict]:
    """A primary of its own, migrated, and one standby added by the CLI; both stopped and deleted afterwards."""
    from app.db.migrate import upgrade
    from app.db.provision import ensure_server, server_status, stop_server

    if test_settings.database_url:
        pytest.skip("MEMVAULT_DATABASE_URL is set: no embedded cluster to make a standby of")
    rootfs = server_status(test_settings).rootfs
    data = tmp_path_factory.mktemp("replica") / "data"
    settings = test_settings.model_copy(update={"data_dir": data, "db_port": 0, "rootfs_dir": rootfs})
    env = {k: v for k, v in cli_env("").items() if k != "MEMVAULT_DATABASE_URL"}
    env.update(MEMVAULT_DATA_DIR=str(data), MEMVAULT_DB_PORT="0")
    if rootfs is not None:
        env["MEMVAULT_ROOTFS_DIR"] = str(rootfs)
    inner = rootfs / "srv/memvault/clusters" / hashlib.sha1(bytes(data.absolute())).hexdigest()[:12] \
        if rootfs is not None else None
    try:
        primary = ensure_server(settings).url
        upgrade(primary)
        out = subprocess.run([sys.executable, "-m", "app.cli", "db", "replica", "add"], env=env, text=True,
                             capture_output=True, check=False, timeout=300)
        assert out.returncode == 0, out.stderr
        standby = out.stdout.strip().splitlines()[-1]  # the URL, last
        assert standby.startswith("postgresql://") and standby != primary
        listed = subprocess.run([sys.executable, "-m", "app.cli", "db", "replica", "list"], env=env, text=True,
                                capture_output=True, check=True).stdout
        assert "standby1\trunning\t" + standby in listed
        yield {"primary": primary, "standby": standby, "settings": settings, "env": env}
    finally:
        stop_server(settings)  # its standbys first
        if inner is not None:
            for d in (inner, Path(f"{inner}-standby1")):
                shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
async def api(pair) -> AsyncIterator[tuple]:
    """The API as `memvault serve` runs it with MEMVAULT_REPLICA_URLS (as memvault_service on both servers)."""
    from litestar.testing import AsyncTestClient

    from app.api.app import create_app
    from app.auth import new_key
    from app.services import Services

    settings = pair["settings"].model_copy(update={"pool_min_size": 3, "replica_check_s": 0.2})
    key_id, key, key_hash = new_key()
    with psycopg.connect(pair["primary"], autocommit=True) as conn:
        conn.execute("SELECT * FROM memvault.api_key_create_v1(%s, %s, 'admin', NULL, 'replica tests')",
                     (key_id, key_hash))
    svc = await Services.start(settings, url=service_login(pair["primary"], settings), ddl_url=pair["primary"],
                               replica_urls=[service_login(pair["standby"], settings)])
    try:
        async with AsyncTestClient(app=create_app(settings, services=svc)) as client:
            client.headers["Authorization"] = f"Bearer {key}"
            yield client, svc
    finally:
        await svc.close()


async def _seed(client, vault: str, texts: list[str]) -> str:
    assert (await client.post("/v1/vaults", json={"name": vault})).status_code == 201
    r = await client.post(f"/v1/vaults/{vault}/memories", json={"items": [{"content": t} for t in texts]})
    assert r.status_code == 200, r.text
    return r.headers[LSN_HEADER]


async def _replayed(svc, lsn: str) -> StandbyDatabase:
    standby = svc.replicas.standbys[0]
    for _ in range(600):
        if await standby.replayed(parse_lsn(lsn)):
            return standby
        await asyncio.sleep(0.1)
    raise AssertionError(f"the standby never replayed {lsn}")


TEXTS = ["My sister Ana lives in Porto and teaches chemistry.", "I moved to Lisbon in 2021 for a job at Acme.",
         "I prefer green tea to coffee in the morning.", "Our team decided to ship the billing service on Fridays."]


async def test_recall_on_the_standby_equals_the_primarys(api) -> None:
    from app.read.config import RecallOptions
    from app.read.recall import recall
    from app.vaults import get_vault

    client, svc = api
    lsn = await _seed(client, "same", TEXTS)
    standby = await _replayed(svc, lsn)
    view = await svc.for_reads(lsn)
    assert view.db is standby and view.writer is svc.db  # reads on the standby, writes on the primary
    for query in ("where does my sister live?", "what do I drink in the morning", "when do we ship billing?"):
        opts = RecallOptions(writeback=False)
        on_primary = await recall(svc, await get_vault(svc.db, "same"), query, opts)
        on_standby = await recall(view, await get_vault(view.db, "same"), query, opts)
        assert [(c.id, c.text) for c in on_standby.cards] == [(c.id, c.text) for c in on_primary.cards]
        assert on_primary.cards

    # over HTTP: served by the standby (its recall log is queued for the primary: no recall_id yet) ...
    vault = await get_vault(svc.db, "same")
    await svc.recall_log_queue.drain()  # the standby recalls above logged theirs through the queue too
    before = await _recall_log_rows(svc, vault.id)
    r = await client.post("/v1/vaults/same/recall", json={"query": "where does my sister live?"},
                          headers={LSN_HEADER: lsn})
    assert r.status_code == 200 and r.json()["cards"][0]["text"] == TEXTS[0]
    assert r.json()["meta"]["recall_id"] is None
    assert LSN_HEADER not in r.headers  # a read has no position to give back
    await svc.recall_log_queue.drain()
    assert await _recall_log_rows(svc, vault.id) == before + 1  # ... and its log row written to the primary


async def _recall_log_rows(svc, vault_id) -> int:
    row = await svc.db.fetchone("SELECT count(*) AS n FROM memvault.recall_log", vault_id=vault_id)
    return int(row["n"])


async def test_a_write_then_a_recall_with_its_position_sees_the_write(api) -> None:
    client, svc = api
    lsn = await _seed(client, "ryw", TEXTS[:2])
    for n in range(3):  # each write's position, sent straight back: the next read sees that write
        text = f"The spare key number {n} is under the blue flowerpot {n}."
        w = await client.post("/v1/vaults/ryw/memories", json={"content": text})
        assert w.status_code == 200 and parse_lsn(w.headers[LSN_HEADER]) >= parse_lsn(lsn)
        lsn = w.headers[LSN_HEADER]
        r = await client.post("/v1/vaults/ryw/recall", json={"query": f"where is spare key number {n}?"},
                              headers={LSN_HEADER: lsn})
        assert r.status_code == 200 and text in [c["text"] for c in r.json()["cards"]]
        listed = await client.get("/v1/vaults/ryw/memories", headers={LSN_HEADER: lsn})
        assert text in [m["content"] for m in listed.json()["items"]]

    # a position no standby has replayed (far ahead): the primary serves the read (its log row: a recall_id)
    ahead = format_lsn(parse_lsn(lsn) + (1 << 40))
    assert await svc.replicas.choose(parse_lsn(ahead)) is None
    r = await client.post("/v1/vaults/ryw/recall", json={"query": "where is spare key number 0?"},
                          headers={LSN_HEADER: ahead})
    assert r.status_code == 200 and isinstance(r.json()["meta"]["recall_id"], int)

    for bad in ("yesterday", "1/2/3", "G/0", "0/" + "F" * 9):
        r = await client.post("/v1/vaults/ryw/recall", json={"query": "spare key"}, headers={LSN_HEADER: bad})
        assert r.status_code == 422 and LSN_HEADER in r.json()["detail"], bad


@asynccontextmanager
async def replay_paused(standby_url: str) -> AsyncIterator[None]:
    """The standby replays no WAL record past this point until the block ends (pg_wal_replay_pause)."""
    async with await psycopg.AsyncConnection.connect(standby_url, autocommit=True) as conn:
        await conn.execute("SELECT pg_wal_replay_pause()")
        try:
            # 'pause requested' already holds back the next record; 'paused' once the startup process sees it
            state = (await (await conn.execute("SELECT pg_get_wal_replay_pause_state()")).fetchone())[0]
            assert state in ("paused", "pause requested"), state
            yield
        finally:
            await conn.execute("SELECT pg_wal_replay_resume()")


class HeaderLog(httpx.AsyncBaseTransport):
    """The app's ASGI transport, noting what each request sent as X-Memvault-LSN."""

    def __init__(self, app) -> None:
        self.inner = httpx.ASGITransport(app=app)
        self.sent: list[tuple[str, str | None]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append((f"{request.method} {request.url.path}", request.headers.get(LSN_HEADER)))
        return await self.inner.handle_async_request(request)


SPARE = "The spare key to the shed is taped under the third stair."


async def test_the_python_client_reads_its_own_writes_while_the_standby_is_paused(api, pair) -> None:
    from app.client import AsyncMemVault

    client, svc = api
    key = client.headers["Authorization"].split()[1]
    log = HeaderLog(client.app)
    async with AsyncMemVault("http://replicas.test", key, transport=log) as mv:
        assert mv.lsn is None
        await mv.create_vault("ryw-client")
        created = mv.lsn
        assert created is not None and log.sent == [("POST /v1/vaults", None)]
        await _replayed(svc, created)  # the standby has the vault ...
        async with replay_paused(pair["standby"]):  # ... and nothing after it
            await mv.remember("ryw-client", SPARE)
            assert parse_lsn(mv.lsn) > parse_lsn(created)
            assert not await svc.replicas.standbys[0].replayed(parse_lsn(mv.lsn))
            found = await mv.recall("ryw-client", "where is the spare key to the shed?")
            assert log.sent[-1] == ("POST /v1/vaults/ryw-client/recall", mv.lsn)  # the position went back
            assert SPARE in [c["text"] for c in found.cards]
            assert isinstance(found.meta["recall_id"], int)  # served by the primary
            listed = await mv.memories("ryw-client")
            assert log.sent[-1][1] == mv.lsn and SPARE in [m.content for m in listed.items]
            # a client that wrote nothing has no position to send: the standby serves it, without the write
            async with AsyncMemVault("http://replicas.test", key, transport=HeaderLog(client.app)) as other:
                stale = await other.recall("ryw-client", "where is the spare key to the shed?")
                assert SPARE not in [c["text"] for c in stale.cards] and stale.meta["recall_id"] is None


async def test_a_hook_process_reads_its_own_writes_while_the_standby_is_paused(api, pair) -> None:
    """The hook's thin client (app/interfaces/hook_client.py, http.client on a real socket) within one process:
    a turn recorded, then a recall that must see it."""
    import socket
    from datetime import UTC, datetime

    import uvicorn

    from app.interfaces.hook_client import HookHTTP, ServiceVault, run_sync

    client, svc = api
    key = client.headers["Authorization"].split()[1]
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    server = uvicorn.Server(uvicorn.Config(client.app, lifespan="off", log_level="warning"))
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            assert not serving.done()
            await asyncio.sleep(0.05)
        created = (await client.post("/v1/vaults", json={"name": "ryw-hook"})).headers[LSN_HEADER]
        await _replayed(svc, created)

        def hook_process(http: HookHTTP) -> tuple[int | None, str]:
            vault = ServiceVault(http, "ryw-hook")
            try:
                run_sync(vault.record("cc-1", "user", SPARE, datetime.now(UTC)))
                return http.lsn.value, run_sync(vault.recall_text("where is the spare key to the shed?", 500))
            finally:
                http.close()

        async with replay_paused(pair["standby"]):
            lsn, text = await asyncio.to_thread(hook_process, HookHTTP(base, key))
            assert lsn is not None and not await svc.replicas.standbys[0].replayed(lsn)
            assert "taped under the third stair" in text
            # without the position (a process that wrote nothing), the paused standby answers: no such memory
            fresh = HookHTTP(base, key)
            stale = await asyncio.to_thread(
                lambda: run_sync(ServiceVault(fresh, "ryw-hook").recall_text("where is the spare key?", 500)))
            fresh.close()
            assert "taped under the third stair" not in stale
    finally:
        server.should_exit = True
        await serving
        sock.close()


async def test_the_graph_and_a_vaults_hnsw_index_work_on_the_standby(api, pair) -> None:
    from app.db import ann_index
    from app.db.connector import Database
    from app.vaults import get_vault
    from app.write.graph import GraphBuild

    client, svc = api
    seeded = await _seed(client, "g", ["Alice works at Acme.", "Alice lives in Paris.", *TEXTS])
    vault = await get_vault(svc.db, "g")
    # the list with the seed's position: a standby that has not replayed it yet (a loaded machine) answers none
    listed = await client.get("/v1/vaults/g/memories", headers={LSN_HEADER: seeded})
    ids = [m["id"] for m in listed.json()["items"]]
    assert len(ids) == 2 + len(TEXTS)
    await GraphBuild(svc).run(vault.id, ids)
    async with Database(pair["primary"]) as owner:  # the index the worker builds at 5,000 blocks
        built = await ann_index.apply(owner, min_blocks=1, vault_id=vault.id, concurrently=False)
    assert [a.action for a in built] == ["build"]
    w = await client.post("/v1/vaults/g/memories", json={"content": "Bob met Alice in Lyon."})
    lsn = w.headers[LSN_HEADER]
    await _replayed(svc, lsn)

    hood = await client.get("/v1/vaults/g/entities/alice/neighbourhood", headers={LSN_HEADER: lsn})
    assert hood.status_code == 200, hood.text
    assert {("Alice", "Acme"), ("Alice", "Paris")} <= {(x["subject"], x["object"]) for x in hood.json()["relations"]}
    with psycopg.connect(pair["standby"], autocommit=True) as conn:  # the standby's own plan uses the index
        assert conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]
        assert conn.execute("SELECT memvault.has_ann_index_v1(%s)", (vault.id,)).fetchone()[0]
        conn.execute("SET enable_seqscan = off")
        plan = "\n".join(r[0] for r in conn.execute(
            "EXPLAIN SELECT id FROM memvault.block WHERE vault_id = %s "
            "ORDER BY embedding <=> (SELECT embedding FROM memvault.block WHERE id = %s) LIMIT 5",
            (vault.id, ids[0])))
        assert ann_index_name(vault.id) in plan
        near = conn.execute("SELECT id FROM memvault.block WHERE vault_id = %s ORDER BY embedding <=> "
                            "(SELECT embedding FROM memvault.block WHERE id = %s) LIMIT 1", (vault.id, ids[0]))
        assert near.fetchone()[0] == ids[0]
    r = await client.post("/v1/vaults/g/recall", json={"query": "where does Alice live?"},
                          headers={LSN_HEADER: lsn})
    assert r.status_code == 200 and "Alice lives in Paris." in [c["text"] for c in r.json()["cards"]]


def ann_index_name(vault_id) -> str:
    return "block_ann_" + str(vault_id).replace("-", "")


async def test_with_the_standby_stopped_recall_still_answers(api, pair) -> None:
    from app.db import cluster
    from app.db.proclog import CommandLog
    from app.db.provision import _load_state, _runtime_from_state

    client, svc = api
    lsn = await _seed(client, "down", TEXTS)
    await _replayed(svc, lsn)
    health = (await client.get("/health")).json()["replicas"]
    assert [(h["healthy"], h["lag_bytes"] is not None) for h in health] == [(True, True)]

    state = _load_state(pair["settings"].data_dir)
    rt = _runtime_from_state(state)
    srt = cluster.Runtime(rt.mode, rt.bindir, state["standbys"][0]["cluster_dir"], rt.root, rt.uid, rt.gid)
    log = CommandLog(pair["settings"].data_dir / "logs" / "provision.log")
    cluster.stop(srt, log)
    try:
        for query in ("where does my sister live?", "what do I drink in the morning"):  # no check has run yet
            r = await client.post("/v1/vaults/down/recall", json={"query": query})
            assert r.status_code == 200 and r.json()["cards"], r.text
        assert (await client.get("/v1/vaults/down/memories")).status_code == 200
        await svc.replicas.check()
        health = (await client.get("/health")).json()["replicas"]
        assert health[0]["healthy"] is False and health[0]["error"]
        assert await svc.for_reads() is svc  # the primary serves every read now
    finally:
        cluster.start(srt, log)
    for _ in range(600):  # a bound only, so that a broken standby cannot hang the suite
        if await _standby_answers(pair["standby"]):
            break
        await asyncio.sleep(0.1)
    await svc.replicas.check()
    assert svc.replicas.standbys[0].state.healthy


async def _standby_answers(url: str) -> bool:
    try:
        async with await psycopg.AsyncConnection.connect(url, connect_timeout=2) as conn:
            return (await (await conn.execute("SELECT pg_is_in_recovery()")).fetchone())[0]
    except psycopg.OperationalError:
        return False


def test_replica_add_refuses_an_external_server(pair) -> None:
    env = {**pair["env"], "MEMVAULT_DATABASE_URL": pair["primary"]}
    out = subprocess.run([sys.executable, "-m", "app.cli", "db", "replica", "add"], env=env, text=True,
                         capture_output=True, check=False)
    assert out.returncode != 0 and "MEMVAULT_REPLICA_URLS" in out.stderr
    assert os.path.isdir(pair["settings"].data_dir)


def test_db_down_and_up_take_the_standby_along(pair) -> None:
    def cli(*args: str) -> str:
        out = subprocess.run([sys.executable, "-m", "app.cli", "db", *args], env=pair["env"], text=True,
                             capture_output=True, check=False, timeout=300)
        assert out.returncode == 0, out.stderr
        return out.stdout

    assert "stopped standby1" in cli("down")  # the standby first, then the primary
    assert "standby1\tstopped\t" in cli("replica", "list")
    cli("up")
    listed = cli("replica", "list")
    assert "standby1\trunning\t" in listed
    url = listed.strip().split("\t")[-1]
    with psycopg.connect(url, connect_timeout=10) as conn:
        assert conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]
