"""Each large vault's own HNSW index: planned, built (by hand, by the worker), used by search and dedup, dropped
with its vault."""

from __future__ import annotations

import asyncio
import json
from uuid import uuid4

import psycopg
from pgvector.psycopg import register_vector

from app.db.ann_index import apply, drop_index, ensure, has_index, plan
from app.vaults import create_vault, drop_vault
from tests.integration.read_helpers import put_blocks

TEXTS = [f"Piano lesson {i}: scales in {key} major, then a minuet" for i, key in enumerate("CDEFGAB")] + \
        ["I moved to Lisbon last spring", "My dentist is Dr. Lin in Tainan", "We adopted a cat named Luna"]


QUESTIONS = ["which city did I move to?", "who is my dentist?", "what is the cat called?",
             "what did I play in D major?", "when did I move?"]


def _index_scans(conn: psycopg.Connection, name: str) -> int:
    """Scans of the index in this transaction so far (0 while it does not exist)."""
    row = conn.execute("SELECT pg_stat_get_xact_numscans(to_regclass(%s))", (f"memvault.{name}",)).fetchone()
    return int(row[0] or 0)


async def test_a_vault_past_the_threshold_gets_its_own_index_and_loses_it_with_the_vault(services, vault) -> None:
    await put_blocks(services, vault, TEXTS)
    small = await create_vault(services.db, "small")
    await put_blocks(services, small, TEXTS[:2])
    due = [a for a in await plan(services.db, min_blocks=5) if a.vault_id in (vault.id, small.id)]
    assert [(a.vault_id, a.action, a.blocks) for a in due] == [(vault.id, "build", 5)]  # counted up to the size
    assert await ensure(services.db, small.id, min_blocks=5) == []  # too small: nothing to do

    done = await apply(services.db, min_blocks=5, vault_id=vault.id)
    assert [(a.action, a.index_name) for a in done] == [("build", due[0].index_name)]
    row = await services.db.fetchone(
        "SELECT memvault.has_ann_index_v1(%s) AS has, pg_get_indexdef(%s::regclass) AS def",
        (vault.id, f"memvault.{due[0].index_name}"))
    assert row["has"] and "USING hnsw" in row["def"] and str(vault.id) in row["def"]
    view = await services.db.fetchone("SELECT vault, usable FROM memvault.vault_ann_indexes WHERE vault_id = %s",
                                      (vault.id,))
    assert view == {"vault": vault.name, "usable": True}
    assert [a for a in await plan(services.db, min_blocks=5) if a.vault_id == vault.id] == []

    await drop_vault(services.db, vault.name)  # its index goes right after it
    gone = await services.db.fetchone("SELECT to_regclass(%s) IS NULL AS gone", (f"memvault.{due[0].index_name}",))
    assert gone["gone"]


async def test_an_index_left_behind_by_a_vault_is_dropped(services, db_url) -> None:
    ghost = uuid4()  # a vault deleted by hand in psql, say, with its index still there
    name = f"block_ann_{ghost.hex}"
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute(conn.execute("SELECT memvault.ann_index_ddl_v1(%s, false)", (ghost,)).fetchone()[0])
    assert [(a.action, a.vault_id) for a in await plan(services.db) if a.index_name == name] == [("drop", None)]
    assert [(a.action, a.index_name) for a in await apply(services.db)] == [("drop", name)]
    row = await services.db.fetchone("SELECT to_regclass(%s) IS NULL AS gone", (f"memvault.{name}",))
    assert row["gone"]


async def test_search_and_dedup_use_the_vaults_index_once_it_exists(services, vault, db_url) -> None:
    await put_blocks(services, vault, TEXTS)
    name = (await services.db.fetchone("SELECT memvault.ann_index_name_v1(%s) AS n", (vault.id,)))["n"]
    qvec = services.embedder.embed_query("which city did I move to?")
    cfg = json.dumps({"exact": False, "sparse_n": 0})  # the dense rail alone, told the vault is large
    search = "SELECT id FROM memvault.fast_search_v1(%s, %s, NULL, NULL, %s::jsonb) ORDER BY rrf DESC, id"
    dedup = "SELECT block_id FROM memvault.dedup_candidates_v3(%s, %s, %s, %s, 3, 0.0::real, 0)"

    def run() -> tuple[list[int], list[int], int]:
        with psycopg.connect(db_url) as conn:
            register_vector(conn)
            conn.execute("SELECT set_config('memvault.vault_id', %s, true)", (str(vault.id),))
            # Ten rows are cheaper to sort than to search by any index: tell the planner to prefer one if it can
            # (which it only can when the query names the vault as a literal matching the index's predicate).
            conn.execute("SET enable_seqscan = off")
            conn.execute("SET enable_sort = off")
            found = [r[0] for r in conn.execute(search, (qvec, "which city did I move to?", cfg))]
            near = [r[0] for r in conn.execute(dedup, (vault.id, [qvec], [b"x" * 32], ["memory"]))]
            return found, near, _index_scans(conn, name)

    exact_found, exact_near, scans = run()  # no index yet: exact scans, whatever the caller says
    assert scans == 0 and "Lisbon" in (await services.db.fetchone(
        "SELECT content FROM memvault.block WHERE id = %s", (exact_found[0],), vault_id=vault.id))["content"]
    await apply(services.db, min_blocks=5, vault_id=vault.id)
    found, near, scans = run()
    assert scans >= 2  # the dense rail and the dedup probe both went through the vault's own index
    assert found[:3] == exact_found[:3] and near == exact_near


async def test_the_worker_job_builds_due_indexes(services, vault, db_url) -> None:
    from app.background.ann_indexes import build_ann_indexes
    from app.worker.app import app as jobs_app
    from app.worker.app import connector_for
    from app.worker.context import worker_context

    await put_blocks(services, vault, TEXTS)
    import app.db.ann_index as ann

    default, ann.MIN_BLOCKS = ann.MIN_BLOCKS, 5
    try:
        with jobs_app.replace_connector(connector_for(db_url)) as worker_app:
            async with worker_app.open_async():
                await build_ann_indexes.configure(app=worker_app).defer_async(timestamp=0)
                await worker_app.run_worker_async(queues=["maintenance"], wait=False, install_signal_handlers=False,
                                                additional_context=worker_context(services))
    finally:
        ann.MIN_BLOCKS = default
    job = await services.db.fetchone(
        "SELECT status FROM public.procrastinate_jobs WHERE task_name = 'build_ann_indexes'")
    has = await services.db.fetchone("SELECT memvault.has_ann_index_v1(%s) AS has", (vault.id,))
    assert job["status"] == "succeeded" and has["has"]


async def test_index_ddl_takes_its_turn(services, vault, db_url) -> None:
    """A purge's DROP INDEX CONCURRENTLY and the worker's build of the same index, at once, deadlocked (each waits
    for the other's transaction): the DDL holds one advisory lock, so they run in turn and both complete."""
    await put_blocks(services, vault, TEXTS)
    holder = await psycopg.AsyncConnection.connect(db_url, autocommit=True)
    await holder.execute("SELECT pg_advisory_lock(hashtext('memvault.ann_index_ddl'))")
    build = asyncio.create_task(apply(services.db, min_blocks=5, vault_id=vault.id))
    await asyncio.sleep(0.5)
    assert not build.done()  # waits for the lock's holder
    await holder.close()
    [built] = await asyncio.wait_for(build, 60)
    assert built.action == "build"

    # a drop and a build racing, many times over: every one completes, the index is there after each build
    for _ in range(3):
        results = await asyncio.wait_for(asyncio.gather(drop_index(services.db, vault.id),
                                                        apply(services.db, min_blocks=5, vault_id=vault.id)), 120)
        assert results[0] in (True, False)
    await drop_index(services.db, vault.id)
    assert not await has_index(services.db, vault.id)


async def test_ef_search_grows_with_the_rows_of_the_vaults_index(services, vault, db_url) -> None:
    """search.ef_search holds up to 50,000 rows in the vault's index, then grows as (rows / 50k)^0.55 (recall
    against exact search at a fixed 100: 0.989 at 10k, 0.977 at 100k, 0.909 at 1M); the fast search runs at it."""
    ef = "SELECT memvault.ann_ef_search_v1(%s, %s) AS ef"
    assert (await services.db.fetchone(ef, (vault.id, 100)))["ef"] == 100  # no index
    await put_blocks(services, vault, TEXTS)
    await apply(services.db, min_blocks=5, vault_id=vault.id)
    assert (await services.db.fetchone(ef, (vault.id, 100)))["ef"] == 100  # ten rows
    name = (await services.db.fetchone("SELECT memvault.ann_index_name_v1(%s) AS n", (vault.id,)))["n"]
    with psycopg.connect(db_url, autocommit=True) as conn:  # what CREATE INDEX records for a vault of a million
        conn.execute("UPDATE pg_class SET reltuples = 1014916 WHERE relname = %s", (name,))
    assert (await services.db.fetchone(ef, (vault.id, 100)))["ef"] == 524
    assert (await services.db.fetchone(ef, (vault.id, 40)))["ef"] == 210
    with psycopg.connect(db_url, autocommit=True) as conn:  # a vault of 100k
        conn.execute("UPDATE pg_class SET reltuples = 101239 WHERE relname = %s", (name,))
    assert (await services.db.fetchone(ef, (vault.id, 100)))["ef"] == 148
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("UPDATE pg_class SET reltuples = 1e9 WHERE relname = %s", (name,))
    assert (await services.db.fetchone(ef, (vault.id, 100)))["ef"] == 1000  # pgvector's maximum
    qvec = services.embedder.embed_query("which city did I move to?")
    with psycopg.connect(db_url) as conn:
        register_vector(conn)
        conn.execute("SELECT set_config('memvault.vault_id', %s, true)", (str(vault.id),))
        conn.execute("SELECT count(*) FROM memvault.fast_search_v1(%s, %s, NULL, NULL, %s::jsonb)",
                     (qvec, "which city did I move to?", json.dumps({"exact": False, "sparse_n": 0})))
        assert conn.execute("SHOW hnsw.ef_search").fetchone()[0] == "1000"


def _options(db_url: str, name: str) -> list[str] | None:
    with psycopg.connect(db_url) as conn:
        row = conn.execute("SELECT c.reloptions FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid "
                           "WHERE c.relname = %s AND i.indisvalid", (name,)).fetchone()
    return row[0] if row else None


async def test_an_index_built_with_other_parameters_is_rebuilt_beside_itself(services, vault, db_url) -> None:
    """The plan says 'rebuild' for an index whose HNSW parameters are not the definition's (built by hand, or
    before ann_index_options_v1 changes) and nothing for a current one; the worker's concurrent rebuild builds the
    new one under another name while the old one serves, then puts it in its place; the migration's blocking pass
    leaves that to the worker. A replacement left behind by a rebuild that did not finish is dropped."""
    await put_blocks(services, vault, TEXTS)
    await apply(services.db, min_blocks=5, vault_id=vault.id)
    name = (await services.db.fetchone("SELECT memvault.ann_index_name_v1(%s) AS n", (vault.id,)))["n"]
    current = (await services.db.fetchone("SELECT memvault.ann_index_options_v1() AS o"))["o"]
    assert sorted(_options(db_url, name)) == sorted(current)
    assert [a for a in await plan(services.db, min_blocks=5) if a.vault_id == vault.id] == []

    assert sorted(current) == ["ef_construction=64", "m=16"]  # what main built: no rebuild when this lands
    with psycopg.connect(db_url, autocommit=True) as conn:  # other parameters, as docs/ann-params.md tried them
        conn.execute(f"DROP INDEX memvault.{name}")
        conn.execute(f"CREATE INDEX {name} ON memvault.block USING hnsw (embedding vector_cosine_ops) "
                     f"WITH (ef_construction = 32, m = 12) WHERE vault_id = '{vault.id}'::uuid")
    due = [(a.action, a.index_name) for a in await plan(services.db, min_blocks=5) if a.vault_id == vault.id]
    assert due == [("rebuild", name)]
    with psycopg.connect(db_url, autocommit=True) as conn:  # the migration's pass: not here, the worker's
        assert conn.execute("SELECT memvault.build_due_ann_indexes_v1(5)").fetchone()[0] == 0
    assert _options(db_url, name) == ["ef_construction=32", "m=12"]

    with psycopg.connect(db_url, autocommit=True) as conn:  # a replacement a killed rebuild left behind
        conn.execute(conn.execute("SELECT memvault.ann_index_ddl_v2(%s, false, %s)",
                                  (vault.id, name + "_next")).fetchone()[0])
    assert ("drop", name + "_next") in [(a.action, a.index_name) for a in await plan(services.db, min_blocks=5)]
    done = [(a.action, a.index_name) for a in await apply(services.db, min_blocks=5, vault_id=None)
            if a.index_name.startswith(name)]
    assert sorted(done) == [("drop", name + "_next"), ("rebuild", name)]
    assert sorted(_options(db_url, name)) == sorted(current) and await has_index(services.db, vault.id)
    gone = await services.db.fetchone("SELECT to_regclass(%s) IS NULL AS gone", (f"memvault.{name}_next",))
    assert gone["gone"]
    assert [a for a in await plan(services.db, min_blocks=5) if a.vault_id == vault.id] == []


async def test_the_ann_bench_reports_the_parameters_the_index_was_built_with(services, vault, db_url) -> None:
    """`bench latency`'s ANN line names the vault's index as built (pg_class.reloptions), not the definition: an
    index the worker has not rebuilt yet is measured for what it is."""
    from app.bench.spread import ann_recall

    await put_blocks(services, vault, TEXTS)
    await apply(services.db, min_blocks=5, vault_id=vault.id)
    out = await ann_recall(services, [vault], QUESTIONS, k=3)
    assert out["hnsw"] == {"m": 16, "ef_construction": 64} and out["vaults_indexed"] == 1
    assert out["ef_search_100"]["recall_at_k"] == 1.0  # ten rows: the graph finds them all
    name = (await services.db.fetchone("SELECT memvault.ann_index_name_v1(%s) AS n", (vault.id,)))["n"]
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute(f"DROP INDEX memvault.{name}")
        conn.execute(f"CREATE INDEX {name} ON memvault.block USING hnsw (embedding vector_cosine_ops) "
                     f"WITH (m = 12) WHERE vault_id = '{vault.id}'::uuid")
    out = await ann_recall(services, [vault], QUESTIONS, k=3)
    assert out["hnsw"] == {"m": 12, "ef_construction": 64}  # pgvector's default for the one left unset


async def test_the_ann_bench_reports_the_held_out_half_apart_from_the_choosing_half(services, vault) -> None:
    """The ANN check measures every question given, split in two fixed halves: even-numbered ones (the half an ef
    choice may look at) and odd-numbered ones (reported); a cap thins each half; exact search is timed."""
    from app.bench.spread import ann_recall

    await put_blocks(services, vault, TEXTS)
    await apply(services.db, min_blocks=5, vault_id=vault.id)
    out = await ann_recall(services, [vault], QUESTIONS, k=3)
    assert {k: out["questions"][k] for k in ("of", "choosing", "reported")} == {"of": 5, "choosing": 3, "reported": 2}
    assert "odd-numbered" in out["questions"]["split"] and out["exact_s"] >= 0
    for ef in (40, 100):
        assert out[f"ef_search_{ef}"]["recall_at_k"] == out[f"ef_search_{ef}"]["choosing_recall_at_k"] == 1.0
    out = await ann_recall(services, [vault], QUESTIONS, k=3, per_half=1)
    assert {k: out["questions"][k] for k in ("choosing", "reported")} == {"choosing": 1, "reported": 1}
    out = await ann_recall(services, [vault], QUESTIONS[:1], k=3)  # no reported half: no number, not a made-up 1
    assert out["ef_search_100"]["recall_at_k"] is None and out["ef_search_100"]["choosing_recall_at_k"] == 1.0


async def test_the_ann_bench_exact_search_never_uses_the_index(services, vault, db_url) -> None:
    """The exact side of the ANN check is its own statement that cannot use the HNSW index, whatever the settings:
    the ANN statement run under enable_indexscan = off got prepared (psycopg, after five runs) with a cached
    sequential-scan plan that the ANN passes on that connection then reused: recall 1 at every ef."""
    from app.bench.spread import ANN_SEARCH, EXACT_SEARCH

    await put_blocks(services, vault, TEXTS)
    await apply(services.db, min_blocks=5, vault_id=vault.id)
    name = (await services.db.fetchone("SELECT memvault.ann_index_name_v1(%s) AS n", (vault.id,)))["n"]
    with psycopg.connect(db_url, autocommit=True) as conn:
        register_vector(conn)
        q = conn.execute("SELECT embedding FROM memvault.block WHERE vault_id = %s LIMIT 1", (vault.id,)).fetchone()[0]
        conn.execute("SET enable_seqscan = off")  # the planner takes any index it can here
        plans = {s: "\n".join(r[0] for r in conn.execute("EXPLAIN " + s, (vault.id, q, 3)).fetchall())
                 for s in (ANN_SEARCH, EXACT_SEARCH)}
    assert name in plans[ANN_SEARCH] and name not in plans[EXACT_SEARCH]
