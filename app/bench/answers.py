"""``memvault bench answers``: a kept vault's answers to the bench questions, as one SHA-256 (issue 33's
"retrieval unchanged" check, made a command).

A change that must not move any ranking (a refactor, a statement folded into another, a plan rewritten) is run
on two fresh copies of one kept vault (``CREATE DATABASE x TEMPLATE y``: the recall logs and the router's samples
then evolve alike), one per code tree; equal hashes say every rendered card and the whole meta but its timings
and the log's id are the same, question by question, to the byte. ``--out`` writes each answer as a JSON line,
so two trees whose hashes differ can be diffed to the question. The questions are ``bench latency``'s (its 10
warm-up and then its fast ones, in its order), asked at a fixed ``--as-of`` with write-back off and no prefetch,
so that nothing the run itself writes or the clock changes moves an answer.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from app.read.config import ReadConfig, RecallOptions

AS_OF = "2026-11-28T12:00:00+00:00"
DROPPED = ("stage_ms", "total_ms", "recall_id")  # what differs between two runs of one tree


def add_parser(bench_sub: argparse._SubParsersAction) -> None:
    what = ("a kept vault's answers to the bench questions as one SHA-256 (same hash: the same cards and meta, "
            "to the byte; run it on two copies of one vault, one per code tree)")
    p = bench_sub.add_parser("answers", help=what, description=what)
    p.add_argument("--vault", required=True, help="a kept vault (e.g. cpu100k of bench latency --keep)")
    p.add_argument("--queries", type=int, default=210,
                   help="questions asked, bench latency's in its order (default 210: its 10 warm-up and 200 fast)")
    p.add_argument("--as-of", dest="as_of", default=AS_OF, help=f"the recalls' as_of, ISO 8601 (default {AS_OF})")
    p.add_argument("--thinking", choices=("fast", "slow"), default="fast", help="the path asked (default fast)")
    p.add_argument("--read", metavar="LEVER=V", help="one read setting other than the default (bench latency's)")
    p.add_argument("--out", type=Path, help="write each answer as a JSON line (to diff two trees question by "
                                            "question)")
    p.add_argument("--json", dest="json_path", type=Path, help="write the result keys to this file")
    p.set_defaults(func=handler)


def answer_line(index: int, query: str, rendered: dict[str, Any], meta: dict[str, Any]) -> str:
    """One answer as the hash reads it: the rendered result and its meta without timings or the log's id."""
    kept = {k: v for k, v in meta.items() if k not in DROPPED}
    return json.dumps({"i": index, "query": query, "result": rendered, "meta": kept}, sort_keys=True, default=str)


async def fingerprint(services: Any, vault: Any, questions: list[str], *, as_of: datetime, thinking: str = "fast",
                      config: ReadConfig | None = None, out: Path | None = None) -> dict[str, Any]:
    """Ask ``questions`` in ``vault`` one by one; the SHA-256 of their answers (and each line to ``out``)."""
    from app.read.recall import ReadTrack

    track = services.read if config is None else ReadTrack(services, config, shortcut=services.read.shortcut)
    options = RecallOptions(thinking=thinking, use_prefetch=False, as_of=as_of, writeback=False)
    digest = hashlib.sha256()
    lines = []
    for i, query in enumerate(questions):
        result = await track.recall(vault, query, options)
        line = answer_line(i, query, result.render(), result.meta)
        digest.update(line.encode() + b"\n")
        lines.append(line)
    await track.drain()
    if out is not None:
        out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return {"vault": vault.name, "questions": len(questions), "thinking": thinking, "as_of": as_of.isoformat(),
            "sha256": digest.hexdigest()}


def handler(args: argparse.Namespace) -> int:
    from app.bench.corpus import corpus
    from app.bench.runtime import run_bench, write_json
    from app.errors import NotFound
    from app.vaults import get_vault

    try:
        as_of = datetime.fromisoformat(args.as_of)
    except ValueError:
        print(f"memvault: --as-of: not an ISO 8601 time: {args.as_of!r} (e.g. {AS_OF})", file=sys.stderr)
        return 2
    if as_of.tzinfo is None:
        print(f"memvault: --as-of: give its UTC offset (e.g. {AS_OF})", file=sys.stderr)
        return 2
    if args.queries < 1:
        print("memvault: --queries: at least 1", file=sys.stderr)
        return 2
    config = None
    if args.read:
        from app.bench.folds import read_settings

        try:
            settings = read_settings(args.read)
        except ValueError as exc:
            print(f"memvault: --read: {exc}", file=sys.stderr)
            return 2
        if len(settings) != 1:
            print(f"memvault: --read takes one value, got {args.read!r}", file=sys.stderr)
            return 2
        config = next(iter(settings.values()))

    async def core(services: Any) -> dict[str, Any] | None:
        try:
            vault = await get_vault(services.db, args.vault)
        except NotFound:
            return None
        _, qs = await asyncio.to_thread(corpus)
        questions = [qs[i % len(qs)] for i in range(args.queries)]  # bench latency's order
        return await fingerprint(services, vault, questions, as_of=as_of, thinking=args.thinking, config=config,
                                 out=args.out)

    result = run_bench(core)
    if result is None:
        print(f"memvault: no vault {args.vault!r} in the bench database (keep one: bench latency --vault NAME "
              "--keep)", file=sys.stderr)
        return 2
    print(f"answers: {result['questions']} questions ({result['thinking']}, as of {result['as_of']}) in vault "
          f"{result['vault']}: sha256 {result['sha256']}")
    write_json(args.json_path, result)
    return 0
