"""``memvault serve | worker | migrate``: run the service, the background worker, the migrations."""

from __future__ import annotations

import argparse


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the API and a background worker (embedded database started if needed)")
    p.add_argument("--host", help="bind address (default MEMVAULT_HOST, 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default MEMVAULT_PORT, 8420)")
    p.add_argument("--no-worker", action="store_true", help="API only; run `memvault worker` separately")
    p.set_defaults(func=_serve)

    p = sub.add_parser("worker", help="run a Procrastinate worker alone")
    p.add_argument("--concurrency", type=int, help="jobs at once (default MEMVAULT_WORKER_CONCURRENCY)")
    p.set_defaults(func=_worker)

    p = sub.add_parser("migrate", help="bring the database to the newest schema (idempotent)")
    p.set_defaults(func=_migrate)


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

    from app.runner import serve

    return asyncio.run(serve(host=args.host, port=args.port, worker=not args.no_worker))


def _worker(args: argparse.Namespace) -> int:
    import asyncio

    from app.runner import run_worker

    return asyncio.run(run_worker(concurrency=args.concurrency))
