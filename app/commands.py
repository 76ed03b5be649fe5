"""``memvault serve | worker | migrate | reembed | index | rail2 | graph``: run the service, the background worker, the
migrations, and the maintenance a DBA may want to start by hand."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from app.db.queries import Q

if TYPE_CHECKING:
    from app.db.ann_index import IndexAction


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the API and a background worker (embedded database started if needed)")
    p.add_argument("--host", help="bind address (default MEMVAULT_HOST, 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default MEMVAULT_PORT, 8420)")
    p.add_argument("--no-worker", action="store_true", help="API only; run `memvault worker` separately")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="API processes (default MEMVAULT_API_WORKERS, 1: the API and the job worker share one "
                   "process); past 1, the job worker runs in a process of its own too")
    p.add_argument("--local-key", action="store_true",
                   help="create a local admin key once, keep it in the data directory (0600) and print how to use it")
    p.set_defaults(func=_serve)

    p = sub.add_parser("worker", help="run a Procrastinate worker alone")
    p.add_argument("--concurrency", type=int, help="jobs at once (default MEMVAULT_WORKER_CONCURRENCY)")
    p.set_defaults(func=_worker)

    p = sub.add_parser("migrate", help="bring the database to the newest schema (idempotent)")
    p.set_defaults(func=_migrate)

    p = sub.add_parser("reembed", help="move the database to another embedder (resumable; recall keeps working)")
    p.add_argument("--to", required=True, metavar="NAME", help="embedder backend: use, e5, e5-onnx, minilm-onnx, mlx, openai")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--abort", action="store_true", help="drop an unfinished move")
    p.set_defaults(func=_reembed)

    p = sub.add_parser("index", help="build each large vault's own HNSW index now (the worker does it every minute)")
    p.add_argument("--min-blocks", type=int, default=None, help="vault size from which a vault gets one (5000)")
    p.add_argument("--plan", action="store_true", help="only print what is due")
    p.add_argument("--blocking", action="store_true",
                   help="build without CONCURRENTLY: quicker, but writes to the block table wait for it")
    p.set_defaults(func=_index)

    p = sub.add_parser("rail2", help="embed the blocks the second dense rail has not reached yet, now "
                                     "(the worker does it every minute; needs rail2_embedder)")
    p.add_argument("--vault", default=None, metavar="NAME", help="only this vault")
    p.set_defaults(func=_rail2)

    p = sub.add_parser("graph", help="knowledge graph maintenance")
    g = p.add_subparsers(dest="graph_command", required=True, metavar="ACTION")
    r = g.add_parser("rebuild", help="rebuild a vault's AGE graph from the entity and triple tables")
    r.add_argument("vault", help="vault name")
    r.set_defaults(func=_graph_rebuild)
    c = g.add_parser("centrality", help="score blocks by graph centrality (PPRBoost) now, for the vaults whose "
                                        "graph changed (the worker does it every 10 minutes)")
    c.add_argument("--vault", default=None, metavar="NAME", help="only this vault")
    c.set_defaults(func=_graph_centrality)


def _migrate(args: argparse.Namespace) -> int:
    from app.db.migrate import current_revision, head_revision, upgrade
    from app.services import database_url
    from app.settings import get_settings

    url = database_url(get_settings())
    before = current_revision(url)
    upgrade(url)
    print(f"schema: {before or 'empty'} -> {head_revision()} (head)")
    return 0


def _serve(args: argparse.Namespace) -> int:
    import asyncio

    from app.runner import serve, serve_processes
    from app.settings import get_settings

    workers = args.workers or get_settings().api_workers
    if workers > 1:
        return serve_processes(host=args.host, port=args.port, workers=workers, worker=not args.no_worker,
                               local_key=args.local_key)
    return asyncio.run(serve(host=args.host, port=args.port, worker=not args.no_worker, local_key=args.local_key))


def _worker(args: argparse.Namespace) -> int:
    import asyncio

    from app.runner import run_worker

    return asyncio.run(run_worker(concurrency=args.concurrency))


def _reembed(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from app.db.connector import sync_connection
    from app.models.registry import build_embedder
    from app.reembed import pending, reembed
    from app.services import database_url
    from app.settings import get_settings

    settings = get_settings()
    url = database_url(settings)
    if args.abort:
        with sync_connection(url) as conn:
            conn.execute(Q.reembed_abort)
        print("reembed: unfinished move dropped; the database keeps its embedder")
        return 0
    embedder = build_embedder(settings.model_copy(update={"embedder": args.to}))
    with sync_connection(url) as conn:
        total = conn.execute(Q.count_vectors).fetchone()[0]
    todo = pending(url) or total
    with tqdm(total=todo, unit="vec", desc=f"reembed -> {embedder.name}") as bar:
        result = reembed(url, embedder, batch=args.batch, progress=bar.update)
    print(f"reembed: {result.blocks} blocks and {result.entities} entities now use {result.name} (dim {result.dim});"
          f" set MEMVAULT_EMBEDDER={args.to} for the service")
    return 0


def _index(args: argparse.Namespace) -> int:
    import asyncio

    from app.db.ann_index import MIN_BLOCKS, apply, plan
    from app.db.connector import Database
    from app.services import database_url
    from app.settings import get_settings

    min_blocks = args.min_blocks or MIN_BLOCKS

    async def run() -> int:
        async with Database(database_url(get_settings())) as db:
            if args.plan:
                todo = await plan(db, min_blocks)
                for a in todo:
                    print(_index_line(a, min_blocks))
                print(f"{len(todo)} due" if todo else "nothing due")
                return 0
            done = await apply(db, min_blocks=min_blocks, concurrently=not args.blocking)
        for a in done:
            print(f"{_index_line(a, min_blocks)}  {a.seconds:.1f} s")
        print(f"{len(done)} done" if done else "nothing due")
        return 0

    return asyncio.run(run())


def _index_line(a: IndexAction, min_blocks: int) -> str:
    size = f"{a.blocks}+" if a.blocks >= min_blocks else str(a.blocks)  # the plan counts up to the size
    return f"{a.action:8s} {a.index_name}  vault {a.vault_id}  {size} blocks"


def _rail2(args: argparse.Namespace) -> int:
    import asyncio

    from app.errors import ConfigError
    from app.read.rail2 import fill
    from app.services import Services
    from app.vaults import get_vault

    async def run() -> int:
        services = await Services.start()
        try:
            if services.rail2 is None:
                raise ConfigError("rail2_embedder is 'none': set MEMVAULT_RAIL2_EMBEDDER (e.g. e5) first")
            vault_id = (await get_vault(services.db, args.vault)).id if args.vault else None
            report = await fill(services, vault_id=vault_id)
        finally:
            await services.close()
        print(f"second rail ({services.rail2.name}): {report.embedded} blocks embedded in {report.vaults} "
              f"vaults, {report.seconds:.1f} s")
        return 0

    return asyncio.run(run())


def _graph_centrality(args: argparse.Namespace) -> int:
    import asyncio

    from app.background.centrality import GraphCentrality
    from app.db.connector import Database
    from app.services import database_url
    from app.settings import get_settings
    from app.vaults import get_vault

    async def run() -> int:
        async with Database(database_url(get_settings())) as db:
            only = (await get_vault(db, args.vault)).id if args.vault else None
            reports = await GraphCentrality(db).score_due(only)
        for r in reports:
            print(f"vault {r.vault_id}: {r.entities} entities, {r.triples} triples, {r.blocks_changed} blocks "
                  "rescored")
        if not reports:
            print("no graph changed since it was last scored")
        return 0

    return asyncio.run(run())


def _graph_rebuild(args: argparse.Namespace) -> int:
    import asyncio

    from app.db.connector import Database
    from app.services import database_url
    from app.settings import get_settings
    from app.vaults import get_vault

    async def run() -> int:
        async with Database(database_url(get_settings())) as db:
            vault = await get_vault(db, args.vault)
            row = await db.fetchone(Q.graph_rebuild, (vault.id,))
            counts = await db.fetchone(Q.graph_counts, (vault.id,))
        print(f"graph of {args.vault}: {counts['vertices']} entities, {row['edges']} relations")
        return 0

    return asyncio.run(run())
