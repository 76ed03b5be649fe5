"""``memvault bench ...``: each benchmark module in this package adds its own sub-command."""

from __future__ import annotations

import argparse

from app.bench import answers, dream, embed, guard, hooks, ingest, keep, latency, load, locomo, longmemeval, report

_BENCHES = (embed, ingest, guard, longmemeval, locomo, latency, answers, load, report, dream, hooks, keep)


def add_commands(sub: argparse._SubParsersAction) -> None:
    bench = sub.add_parser("bench", help="benchmarks on real data; each prints a table, --json writes keys")
    bench_sub = bench.add_subparsers(dest="bench", required=True, metavar="BENCH")
    for module in _BENCHES:
        module.add_parser(bench_sub)
