"""``memvault bench longmemeval PATH``: session-level retrieval on LongMemEval (any split of its format).

Each question gets a fresh vault; its whole haystack (user and assistant turns, each session at its date) goes
through the write track; the question is recalled after its history, as of the later of its ``question_date``
and its last session's date (``--as-of`` chooses otherwise). Returned memories map to
sessions through provenance, sessions rank by first appearance, and recall asks for enough memories to fill
10 distinct sessions. Abstention questions (ids ending ``_abs``) are not scored, so they are not ingested.

``--shared-vault NAME`` measures the same questions at scale: every question's haystack goes into one vault
(sessions by id, each written once; the vault is kept, and a later run writes only what it lacks), so each
question is answered from some 60 times more memories, most of them other people's conversations.

``--folds K``: a seeded split of the questions into K folds, stratified by type; the metrics per fold and their
spread, overall and per type. ``--tune section.field=v1,v2,...`` measures each candidate read setting on the same
haystacks and chooses it on the other folds, reported on the held-out one (app/bench/folds.py).
"""

from __future__ import annotations

import argparse
import asyncio
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from app.importers.datasets import LmeQuestion
from app.bench.folds import (Fold, cross_validate, fold_spread, format_cv, format_setting, format_spread,
                             seeded_folds)
from app.bench.harness import (PIPELINES, IngestStats, Retriever, analyze_blocks, ingest_sessions,
                               make_retriever, memories_for, timed_recall)
from app.bench.metrics import Memory, mean, ndcg, percentile, rank_sessions, recall_all, recall_any, tokens_at
from app.services import Services

SESSIONS_K = 10
FIRST_ASK = 50  # memories asked for first; doubled until 10 distinct sessions are filled
MAX_ASK = 200
METRICS = ("recall_any@5", "recall_any@10", "recall_all@5", "recall_all@10", "ndcg@10")
AS_OF = ("after-history", "question", "end-of-day", "none")
KEYS = (*METRICS, "by_type", "questions", "tokens@10", "ingest_turns_per_s", "recall_p50_ms", "recall_p95_ms")


def add_parser(bench_sub: argparse._SubParsersAction) -> None:
    p = bench_sub.add_parser("longmemeval", help="LongMemEval session recall (any split of its JSON format)")
    p.add_argument("path", type=Path, help="LongMemEval JSON file, plain or gzip")
    p.add_argument("--limit", type=int, help="only the first N questions")
    p.add_argument("--per-type", type=int,
                   help="only the first N questions of each type (stratified quick run)")
    p.add_argument("--json", dest="json_path", type=Path, help="write the result keys to this file")
    p.add_argument("--details", type=Path, help="write per-question rankings to this JSON file")
    p.add_argument("--pipeline", choices=(*PIPELINES, "rails"), default="full",
                   help="read path to measure (default full); rails: the product's sparse and dense rails, their "
                        "fusion and the full track side by side with BM25 and exact search of each reference "
                        "encoder (app/bench/references.py)")
    p.add_argument("--ref-encoders", default="use",
                   help="with --pipeline rails: the reference encoders (default use; minilm-onnx and e5 embed "
                        "each haystack's long chunks in minutes here, hours for the dev file; those not installed "
                        "are skipped)")
    p.add_argument("--as-of", choices=AS_OF, default="after-history",
                   help="recall as of the later of the question's date-time and its last session (default: "
                        "the benchmark asks after the whole history, but 5 of the 60 dev haystacks hold "
                        "sessions, some gold, dated hours after their question), as of the question's "
                        "date-time, the end of its day, or now")
    p.add_argument("--close-sessions", action=argparse.BooleanOptionalAction, default=True,
                   help="close each session after ingest (atomic units + summary); default on")
    p.add_argument("--jobs", type=int, default=2,
                   help="concurrent writers ingesting haystacks (default 2); recall always runs alone")
    p.add_argument("--folds", type=int, metavar="K",
                   help="split the questions into K seeded folds (stratified by type): metrics per fold and spread")
    p.add_argument("--seed", type=int, default=0, help="the folds' seed (default 0)")
    p.add_argument("--tune", metavar="LEVER=V1,V2,...",
                   help="candidate read settings (e.g. cohesion.weight=0.1,0,0.2; the current value first): each "
                        "is chosen on the other folds and scored on the held-out one (with --folds, default 3)")
    p.add_argument("--shared-vault", metavar="NAME",
                   help="every haystack in this one vault (kept for later runs), each question recalled there")
    p.set_defaults(func=handler)


def handler(args: argparse.Namespace) -> int:
    from app.importers.datasets import load_longmemeval, per_type
    from app.bench.runtime import conditions_note, run_bench, write_json

    questions = load_longmemeval(args.path, args.limit)
    if args.per_type:
        questions = per_type(questions, args.per_type)
    from app.bench.folds import tune_grid

    grid = tune_grid(args.tune, "bench longmemeval")
    if args.folds is not None and args.folds < 2:
        raise SystemExit(f"bench longmemeval: --folds needs at least 2, got {args.folds}")

    if args.pipeline == "rails":
        if args.shared_vault or grid:
            raise SystemExit("bench longmemeval: --pipeline rails takes neither --shared-vault nor --tune")
        return _rails_handler(args, questions)

    async def core(services: Services) -> dict:
        if args.shared_vault:
            return await run_longmemeval_shared(services, questions, args.shared_vault, pipeline=args.pipeline,
                                                close_sessions=args.close_sessions, as_of=args.as_of,
                                                jobs=args.jobs)
        return await run_longmemeval(services, questions, pipeline=args.pipeline,
                                     close_sessions=args.close_sessions, as_of=args.as_of, jobs=args.jobs, grid=grid)

    result = run_bench(core)
    where = f" · one vault: {args.shared_vault} ({result['vault_blocks']} memories)" if args.shared_vault else ""
    title = f"LongMemEval {args.path.name} · pipeline {args.pipeline}{where}{conditions_note()}"
    print(format_table(result, title=title))
    if args.folds or grid:
        folds = longmemeval_folds(questions, args.folds or 3, args.seed)
        result["folds"] = lme_fold_spread(result["details"], folds)
        print(format_spread(result["folds"], list(METRICS), f"{len(folds)} seeded folds of the questions "
                            f"(seed {args.seed}, stratified by type)", "ndcg@10"))
        if grid:
            result["cv"] = cross_validate(result["by_setting"], folds, lambda d: d["question_id"], _objective)
            for name, details in result["by_setting"].items():
                rows = lme_fold_spread(details, folds)["folds"]
                print(format_setting(name, rows, [(m, lambda r, m=m: r[m]) for m in
                                                  ("recall_any@5", "recall_all@10", "ndcg@10")]))
            print(format_cv(result["cv"], "ndcg@10"))
    write_json(args.json_path, {k: result[k] for k in (*KEYS, *(x for x in ("folds", "cv") if x in result))})
    write_json(args.details, {"pipeline": args.pipeline, "close_sessions": args.close_sessions,
                              "questions": result["details"]})
    return 0


RAILS_METRICS = ("recall_any@5", "recall_all@10", "ndcg@10", "recall_all@pool")


def _rails_handler(args: argparse.Namespace, questions: list[LmeQuestion]) -> int:
    """``--pipeline rails``: every rail beside its references on the same questions, overall, per type and
    (with ``--folds K``) per fold. ``recall_all@pool``: every gold session among the sessions of everything the
    retriever returned (a rail's top 100 memories; the fusion's whole candidate pool)."""
    from app.bench.references import available_encoders, bm25_cv, format_rails, rail_retrievers
    from app.bench.runtime import conditions_note, run_bench, write_json

    try:
        encoders, skipped = available_encoders([e for e in args.ref_encoders.split(",") if e])
    except ValueError as exc:
        raise SystemExit(f"bench longmemeval: --ref-encoders: {exc}") from exc

    async def core(services: Services) -> dict:
        return await run_longmemeval_pipelines(services, questions, retrievers=rail_retrievers(services, encoders),
                                               close_sessions=args.close_sessions, as_of=args.as_of,
                                               jobs=args.jobs)

    results = run_bench(core)
    for r in results.values():
        r["recall_all@pool"] = round(mean(d["recall_all@pool"] for d in r["details"]), 4)
        for t, row in r["by_type"].items():
            row["recall_all@pool"] = round(mean(d["recall_all@pool"] for d in r["details"] if d["type"] == t), 4)
    print(f"LongMemEval {args.path.name} · rails and references{conditions_note()}"
          + "".join(f"\n  {k} skipped: {why}" for k, why in skipped.items()))
    print(format_rails(results, RAILS_METRICS, "type"))
    out: dict[str, Any] = {name: {k: r[k] for k in (*RAILS_METRICS, "by_type", "questions")}
                           for name, r in results.items()}
    if args.folds:
        folds = longmemeval_folds(questions, args.folds, args.seed)
        print(f"{len(folds)} seeded folds (seed {args.seed}), per fold: " + " / ".join(f.name for f in folds))
        for name, r in results.items():
            sp = fold_spread(r["details"], folds, lambda d: d["question_id"], RAILS_METRICS)
            out[name]["folds"] = sp["folds"]
            print(f"  {name:<12}" + "  ".join(f"{m} " + " / ".join(f"{row[m]:.3f}" for row in sp["folds"])
                                              for m in RAILS_METRICS))
        out["cv"] = bm25_cv(results, folds, lambda d: d["question_id"], _objective)
        print(format_cv(out["cv"], "ndcg@10"))
    write_json(args.json_path, out)
    write_json(args.details, {"pipeline": "rails", "close_sessions": args.close_sessions,
                              "questions": {name: r["details"] for name, r in results.items()}})
    return 0


def as_of_for(q: LmeQuestion, mode: str = "after-history") -> datetime | None:
    """The time a question is recalled at. LongMemEval asks each question after its whole haystack, so
    ``after-history`` takes the later of ``question_date`` and the last session's date: some haystacks (5 of
    the 60 dev ones) hold sessions dated hours after their question on the same day, gold sessions among them,
    and recall as of the question alone (``question``) filters those out as not yet valid."""
    if mode == "none":
        return None
    if mode == "after-history":
        return max([q.date, *(s.date for s in q.sessions)])
    if mode == "end-of-day":
        return q.date.replace(hour=23, minute=59, second=59)
    return q.date


async def recall_sessions(services: Services, retriever: Retriever, vault: Any, q: LmeQuestion,
                          as_of: str = "after-history") -> tuple[list[Memory], list[str], float]:
    """Ask until 10 distinct sessions are filled (or asking for more brings nothing more); total milliseconds.

    Fewer memories than asked does not mean the vault has no more: the formatter collapses a card that repeats
    a better one (a closed session's sentence-level units beside their turn), so 50 asked may give 43 while
    100 asked gives 90. Only an answer that does not grow when more is asked ends the search early."""
    file_id = {s.id: s.file_id for s in q.sessions}  # a reused id's second session counts as the file's id
    n, total_ms, before = FIRST_ASK, 0.0, -1
    while True:
        hits, ms = await timed_recall(retriever, vault, q.question, as_of=as_of_for(q, as_of), n=n)
        total_ms += ms
        memories = await memories_for(services, vault, hits)
        ranked = list(dict.fromkeys(file_id.get(s, s) for s in rank_sessions(m.sessions for m in memories)))
        if len(ranked) >= SESSIONS_K or len(hits) <= before or n >= MAX_ASK:
            return memories, ranked, total_ms
        before, n = len(hits), min(n * 2, MAX_ASK)


def longmemeval_folds(questions: Sequence[LmeQuestion], k: int, seed: int = 0) -> list[Fold]:
    """K folds of the scored questions, seeded, each type dealt evenly across them."""
    return seeded_folds([(q.id, q.type) for q in _scored(list(questions))], k, seed)


def lme_fold_spread(details: list[dict[str, Any]], folds: Sequence[Fold]) -> dict[str, Any]:
    return fold_spread(details, folds, lambda d: d["question_id"], METRICS, category=lambda d: d["type"])


def _objective(details: Sequence[dict[str, Any]]) -> float:
    """What --tune maximises: NDCG@10 over the scored questions."""
    return mean(d["ndcg@10"] for d in details)


async def run_longmemeval(services: Services, questions: list[LmeQuestion], *, pipeline: str = "full",
                          close_sessions: bool = True, show_progress: bool = True,
                          as_of: str = "after-history", jobs: int = 1,
                          grid: dict[str, Any] | None = None) -> dict[str, Any]:
    """One pipeline's result; with ``grid`` (candidate ReadConfigs of the full pipeline), the first setting's
    result with every setting's details under ``by_setting``."""
    if grid:
        from app.bench.full import grid_recalls, with_settings

        results = await run_longmemeval_pipelines(services, questions, retrievers=grid_recalls(services, grid),
                                                  close_sessions=close_sessions, show_progress=show_progress,
                                                  as_of=as_of, jobs=jobs)
        return with_settings(results, grid)
    results = await run_longmemeval_pipelines(services, questions, pipelines=(pipeline,),
                                              close_sessions=close_sessions, show_progress=show_progress,
                                              as_of=as_of, jobs=jobs)
    return results[pipeline]


async def run_longmemeval_pipelines(services: Services, questions: list[LmeQuestion], *,
                                    pipelines: Sequence[str] = ("full",), close_sessions: bool = True,
                                    show_progress: bool = True, as_of: str = "after-history", jobs: int = 1,
                                    batch: int = 8, retrievers: dict[str, Retriever] | None = None
                                    ) -> dict[str, dict[str, Any]]:
    """Ingest each question's haystack once, then recall it through every pipeline (baselines first: the full
    pipeline writes access counts back, which only it reads).

    Questions go in batches of ``batch``: their haystacks are ingested by ``jobs`` concurrent writers (each
    question in its own vault), then the batch's questions are recalled one at a time, so recall latency is
    measured with no ingest running beside it. ``ingest_turns_per_s`` is per writer (turns over the summed
    time of the ingests)."""
    from contextlib import AsyncExitStack

    from app.bench.runtime import progress, scratch_vault

    if retrievers is None:
        order = sorted(pipelines, key=lambda p: p == "full")
        retrievers = {p: make_retriever(services, p) for p in order}
    else:
        order = list(retrievers)
    scored = _scored(questions)
    stats = IngestStats()
    details: dict[str, list[dict[str, Any]]] = {p: [] for p in order}
    bar = progress(sum(q.turn_count for q in scored), f"longmemeval/{'+'.join(order)}", unit="turn") \
        if show_progress else None
    limit = asyncio.Semaphore(max(1, jobs))

    async def ingest(vault: Any, q: LmeQuestion) -> None:
        async with limit:
            await ingest_sessions(services, vault, q.sessions, close=close_sessions, stats=stats)
            if bar is not None:
                bar.update(q.turn_count)  # not a difference of stats.turns: the other writer adds to it too

    try:
        for start in range(0, len(scored), max(1, batch)):
            group = scored[start:start + max(1, batch)]
            async with AsyncExitStack() as stack:
                vaults = [await stack.enter_async_context(scratch_vault(services, "bench-lme")) for _ in group]
                async with asyncio.TaskGroup() as tg:
                    for vault, q in zip(vaults, group, strict=True):
                        tg.create_task(ingest(vault, q))
                await analyze_blocks(services, vaults)
                for vault, q in zip(vaults, group, strict=True):
                    for p in order:
                        details[p].append(await _question_detail(services, retrievers[p], vault, q, as_of))
            if bar is not None:
                bar.set_postfix(any5=f"{mean(d['recall_any@5'] for d in details[order[-1]]):.3f}")
    finally:
        if bar is not None:
            bar.close()
    return {p: summarize(details[p], stats, skipped=len(questions) - len(scored)) for p in order}


async def run_longmemeval_shared(services: Services, questions: list[LmeQuestion], vault_name: str, *,
                                 pipeline: str = "full", close_sessions: bool = True, as_of: str = "after-history",
                                 jobs: int = 2, show_progress: bool = True) -> dict[str, Any]:
    """All haystacks in one vault (each session once, ``jobs`` writers), then every question recalled there."""
    from app.bench.runtime import progress
    from app.vaults import get_or_create_vault

    scored = _scored(questions)
    sessions = {s.id: s for q in scored for s in q.sessions}
    vault = await get_or_create_vault(services.db, vault_name)
    rows = await services.db.fetchall("SELECT id FROM memvault.session WHERE vault_id = %s", (vault.id,),
                                      vault_id=vault.id)
    written = {r["id"] for r in rows}
    todo = sorted((s for sid, s in sessions.items() if sid not in written), key=lambda s: s.date)
    stats = IngestStats()
    bar = progress(sum(len(s.turns) for s in todo), f"longmemeval/shared/{pipeline}", unit="turn") \
        if show_progress else None

    async def writer(part: list) -> None:
        for s in part:
            await ingest_sessions(services, vault, [s], close=close_sessions, stats=stats)
            if bar is not None:
                bar.update(len(s.turns))

    writers = max(1, jobs)
    try:
        async with asyncio.TaskGroup() as tg:
            for j in range(writers):
                tg.create_task(writer(todo[j::writers]))
    finally:
        if bar is not None:
            bar.close()
    if todo:
        await analyze_blocks(services, [vault], vacuum=True)
    retriever = make_retriever(services, pipeline)
    details = [await _question_detail(services, retriever, vault, q, as_of) for q in scored]
    size = await services.db.fetchone("SELECT count(*) AS n FROM memvault.block WHERE vault_id = %s", (vault.id,),
                                      vault_id=vault.id)
    return {**summarize(details, stats, skipped=len(questions) - len(scored)), "vault_blocks": int(size["n"])}


def _scored(questions: list[LmeQuestion]) -> list[LmeQuestion]:
    """The questions that are scored: not abstentions, and with gold sessions."""
    return [q for q in questions if not q.abstention and q.answer_session_ids]


async def _question_detail(services: Services, retriever: Retriever, vault: Any, q: LmeQuestion,
                           as_of: str) -> dict[str, Any]:
    """Recall one question and score its session ranking (one row of ``details``)."""
    memories, ranked, ms = await recall_sessions(services, retriever, vault, q, as_of)
    gold = set(q.answer_session_ids)
    return {
        "question_id": q.id, "type": q.type, "ms": round(ms, 2),
        "tokens@10": tokens_at(memories, 10), "memories": len(memories),
        "gold": sorted(gold), "ranked": ranked[:SESSIONS_K],
        "top": [[m.block_id, m.sessions[0] if m.sessions else None] for m in memories[:10]],
        **session_scores(ranked, gold),
        "recall_all@pool": recall_all(ranked, gold, len(ranked)) if ranked else 0.0,
    }


def session_scores(ranked: list[str], gold: set[str]) -> dict[str, float]:
    return {"recall_any@5": recall_any(ranked, gold, 5), "recall_any@10": recall_any(ranked, gold, 10),
            "recall_all@5": recall_all(ranked, gold, 5), "recall_all@10": recall_all(ranked, gold, 10),
            "ndcg@10": ndcg(ranked, gold, 10)}


def summarize(details: list[dict[str, Any]], stats: IngestStats, *, skipped: int = 0) -> dict[str, Any]:
    by_type: dict[str, list[dict]] = defaultdict(list)
    for d in details:
        by_type[d["type"]].append(d)
    latencies = [d["ms"] for d in details]
    return {
        **{m: round(mean(d[m] for d in details), 4) for m in METRICS},
        "by_type": {t: {**{m: round(mean(d[m] for d in ds), 4) for m in METRICS}, "questions": len(ds)}
                    for t, ds in sorted(by_type.items())},
        "questions": len(details),
        "tokens@10": round(mean(d["tokens@10"] for d in details), 1),
        "ingest_turns_per_s": round(stats.turns_per_s, 1),
        "recall_p50_ms": round(percentile(latencies, 50), 2),
        "recall_p95_ms": round(percentile(latencies, 95), 2),
        "skipped_abstention": skipped,
        "details": details,
    }


def format_table(result: dict[str, Any], title: str = "LongMemEval") -> str:
    cols = METRICS
    lines = [title, f"{'type':<28}{'n':>4}" + "".join(f"{c:>15}" for c in cols)]
    for t, row in result["by_type"].items():
        lines.append(f"{t:<28}{row['questions']:>4}" + "".join(f"{row[c]:>15.3f}" for c in cols))
    lines.append(f"{'all':<28}{result['questions']:>4}" + "".join(f"{result[c]:>15.3f}" for c in cols))
    lines.append(f"tokens@10 {result['tokens@10']:.0f} · ingest {result['ingest_turns_per_s']:.1f} turns/s · "
                 f"recall p50 {result['recall_p50_ms']:.1f} ms, p95 {result['recall_p95_ms']:.1f} ms")
    return "\n".join(lines)
