"""``memvault bench locomo PATH``: evidence-turn coverage on LoCoMo (any split of its JSON format).

One vault per conversation; its sessions go through the write track at their dates (both speakers are people:
each turn is a user turn, "Speaker: text", with the caption of a shared image). Each question with evidence is
recalled as of the conversation's last session; its score at k is the fraction of its evidence turns covered
by the top-k memories (provenance points at the turn, or the memory's text contains it). Averages leave out
category 5 (adversarial: no answer exists), which is still reported by category.

``--folds``: leave-one-conversation-out, each conversation a fold; the metric per fold and its spread, overall and
per category. ``--tune section.field=v1,v2,...`` measures each candidate read setting on the same vaults and
chooses it on the other folds, reported on the held-out one (app/bench/folds.py). ``--keep`` keeps each
conversation's vault (``bench-locomo-<sample id>``) and reuses it on the next run: only the read side runs again.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from app.importers.datasets import LocomoConversation
from app.bench.folds import Fold, cross_validate, fold_spread, format_cv, format_setting, format_spread, group_folds
from app.bench.harness import (PIPELINES, IngestStats, Retriever, analyze_blocks, ensure_rail2, ingest_sessions,
                               make_retriever, memories_for, timed_recall)
from app.bench.metrics import EvidenceTurn, evidence_coverage, mean, percentile, tokens_at
from app.services import Services
from app.vaults import Vault

KS = (5, 10, 25)
DEEP_KS = (50, 100)  # with --depth: how much of the evidence the pipeline finds at all, ordered or not
ADVERSARIAL = 5
METRICS = tuple(f"recall@{k}" for k in KS)
TEXT_METRIC = "text_recall@10"  # coverage by returned text alone, without provenance
KEYS = (*METRICS, TEXT_METRIC, "by_category", "questions", "tokens@10", "ingest_turns_per_s", "recall_p50_ms",
        "recall_p95_ms")
RAILS_KS = (*KS, 50, 100, 300)  # --pipeline rails: @100 is a rail's candidate pool, @300 a fused one (up to 300)
REF_ENCODERS = ("use", "e5-onnx", "minilm-onnx")
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def add_parser(bench_sub: argparse._SubParsersAction) -> None:
    p = bench_sub.add_parser("locomo", help="LoCoMo evidence-turn coverage (any split of its JSON format)")
    p.add_argument("path", type=Path, help="LoCoMo JSON file (a list of conversations)")
    p.add_argument("--limit", type=int, help="only the first N conversations")
    p.add_argument("--json", dest="json_path", type=Path, help="write the result keys to this file")
    p.add_argument("--details", type=Path, help="write per-question coverage to this JSON file")
    p.add_argument("--pipeline", choices=(*PIPELINES, "rails"), default="full",
                   help="read path to measure (default full); rails: the product's sparse and dense rails, their "
                        "fusion and the full track side by side with BM25 and exact search of each reference "
                        "encoder, @10 / @25 / @100 and the fused pool, 100 memories asked whatever --depth says "
                        "(app/bench/references.py)")
    p.add_argument("--ref-encoders", default=",".join(REF_ENCODERS),
                   help=f"with --pipeline rails: the reference encoders (default {','.join(REF_ENCODERS)}; "
                        "those not installed are skipped)")
    p.add_argument("--close-sessions", action=argparse.BooleanOptionalAction, default=True,
                   help="close each session after ingest (atomic units + summary); default on")
    p.add_argument("--folds", action="store_true",
                   help="leave-one-conversation-out: the metrics per conversation (fold) and their spread")
    p.add_argument("--tune", metavar="LEVER=V1,V2,...",
                   help="candidate read settings (e.g. scoring.window_w=0.5,0,1; the current value first): each "
                        "is chosen on the other folds and scored on the held-out one (implies --folds)")
    p.add_argument("--keep", action="store_true",
                   help="keep each conversation's vault and reuse it when it exists (re-scores the read side only; "
                        "drop the bench-locomo-* vaults after a write-track change); recall then writes no "
                        "access counts back, so kept vaults score alike on every run")
    p.add_argument("--depth", type=_depth, default=max(KS),
                   help=f"memories asked per question (default {max(KS)}); 50 or more also reports recall@50 "
                        "and @100: the evidence found at all, however it is ordered (a larger request also "
                        "widens the candidate pool, so @10 may move a little)")
    p.set_defaults(func=handler)


def _depth(value: str) -> int:
    n = int(value)
    if not max(KS) <= n <= 200:
        raise argparse.ArgumentTypeError(f"--depth must be between {max(KS)} and 200, got {n}")
    return n


def ks_for(depth: int) -> tuple[int, ...]:
    """The cut-offs reported when ``depth`` memories are asked per question."""
    return (*KS, *(k for k in DEEP_KS if k <= depth))


def handler(args: argparse.Namespace) -> int:
    from app.importers.datasets import load_locomo
    from app.bench.runtime import conditions_note, run_bench, write_json

    conversations = load_locomo(args.path, args.limit)
    from app.bench.folds import tune_grid

    grid = tune_grid(args.tune, "bench locomo")

    if args.pipeline == "rails":
        if grid:
            raise SystemExit("bench locomo: --pipeline rails takes no --tune (it compares the full track with "
                             "and without BM25 scoring itself)")
        return _rails_handler(args, conversations)

    async def core(services: Services) -> dict:
        return await run_locomo(services, conversations, pipeline=args.pipeline,
                                close_sessions=args.close_sessions, depth=args.depth, keep=args.keep, grid=grid)

    result = run_bench(core)
    note = f"{conditions_note()}{' · kept vaults, no access write-back' if args.keep or grid else ''}"
    print(format_table(result, title=f"LoCoMo {args.path.name} · pipeline {args.pipeline}{note}"))
    if args.folds or grid:
        folds = locomo_folds(conversations)
        result["folds"] = locomo_fold_spread(result["details"], folds)
        print(format_spread(result["folds"], list(METRICS), "leave-one-conversation-out (each conversation a fold)",
                            "recall@10", {str(c): n for c, n in CATEGORY_NAMES.items()}))
        if grid:
            result["cv"] = cross_validate(result["by_setting"], folds, lambda d: d["conversation"], _objective)
            for name, details in result["by_setting"].items():
                sp = locomo_fold_spread(details, folds)
                print(format_setting(name, sp["folds"], [
                    ("@10", lambda r: r["recall@10"]),
                    ("temporal", lambda r: r["by_category"].get("2", {}).get("recall@10", 0.0))]))
            print(format_cv(result["cv"], "recall@10"))
    write_json(args.json_path, {k: result[k] for k in (*KEYS, "ks", *(f"recall@{k}" for k in result["ks"]),
                                                       *(x for x in ("folds", "cv") if x in result))})
    write_json(args.details, {"pipeline": args.pipeline, "close_sessions": args.close_sessions,
                              "questions": result["details"],
                              **({"by_setting": result["by_setting"]} if grid else {})})
    return 0


def _rails_handler(args: argparse.Namespace, conversations: list[LocomoConversation]) -> int:
    """``--pipeline rails``: every rail beside its references on the same questions, overall, per category and
    (with ``--folds``) per conversation."""
    from app.bench.references import available_encoders, bm25_cv, format_rails, rail_retrievers
    from app.bench.runtime import conditions_note, run_bench, write_json

    try:
        encoders, skipped = available_encoders([e for e in args.ref_encoders.split(",") if e])
    except ValueError as exc:
        raise SystemExit(f"bench locomo: --ref-encoders: {exc}") from exc

    async def core(services: Services) -> dict:
        retrievers = rail_retrievers(services, encoders, writeback=not args.keep)
        return await run_locomo_pipelines(services, conversations, retrievers=retrievers,
                                          close_sessions=args.close_sessions, depth=100, keep=args.keep,
                                          ks=RAILS_KS)

    results = run_bench(core)
    metrics = [f"recall@{k}" for k in (10, 25, 100, 300)]
    print(f"LoCoMo {args.path.name} · rails and references (recall@300: the whole list, a fused pool; a single "
          f"rail returns 100){conditions_note()}" + "".join(f"\n  {k} skipped: {why}" for k, why in skipped.items()))
    print(format_rails(results, metrics, "category", {str(c): n for c, n in CATEGORY_NAMES.items()}))
    out: dict[str, Any] = {name: {k: r[k] for k in (*metrics, "by_category", "questions")}
                           for name, r in results.items()}
    if args.folds:
        folds = locomo_folds(conversations)
        print("leave-one-conversation-out, per fold: " + " / ".join(f.name for f in folds))
        for name, r in results.items():
            sp = fold_spread(r["details"], folds, lambda d: d["conversation"], metrics,
                             scored=lambda d: d["category"] != ADVERSARIAL)
            out[name]["folds"] = sp["folds"]
            print(f"  {name:<12}" + "  ".join(f"{m} " + " / ".join(f"{row[m]:.3f}" for row in sp["folds"])
                                              for m in metrics))
        out["cv"] = bm25_cv(results, folds, lambda d: d["conversation"], _objective)
        print(format_cv(out["cv"], "recall@10"))
    write_json(args.json_path, out)
    write_json(args.details, {"pipeline": "rails", "close_sessions": args.close_sessions,
                              "questions": {name: r["details"] for name, r in results.items()}})
    return 0


def locomo_folds(conversations: Sequence[LocomoConversation]) -> list[Fold]:
    """Leave-one-conversation-out: one fold per conversation."""
    return group_folds(c.id for c in conversations)


def locomo_fold_spread(details: list[dict[str, Any]], folds: Sequence[Fold]) -> dict[str, Any]:
    return fold_spread(details, folds, lambda d: d["conversation"], METRICS, category=lambda d: str(d["category"]),
                       scored=lambda d: d["category"] != ADVERSARIAL)


def _objective(details: Sequence[dict[str, Any]]) -> float:
    """What --tune maximises: recall@10 over the questions with an answer (category 5 left out)."""
    return mean(d["recall@10"] for d in details if d["category"] != ADVERSARIAL)


async def run_locomo(services: Services, conversations: list[LocomoConversation], *, pipeline: str = "full",
                     close_sessions: bool = True, show_progress: bool = True, depth: int = max(KS),
                     keep: bool = False, grid: dict[str, Any] | None = None) -> dict[str, Any]:
    """One pipeline's result; with ``grid`` (candidate ReadConfigs of the full pipeline), the first setting's
    result with every setting's details under ``by_setting``."""
    if grid:
        from app.bench.full import grid_recalls, with_settings

        results = await run_locomo_pipelines(services, conversations, retrievers=grid_recalls(services, grid),
                                             close_sessions=close_sessions, show_progress=show_progress,
                                             depth=depth, keep=True)
        return with_settings(results, grid)
    results = await run_locomo_pipelines(services, conversations, pipelines=(pipeline,),
                                         close_sessions=close_sessions, show_progress=show_progress, depth=depth,
                                         keep=keep)
    return results[pipeline]


async def run_locomo_pipelines(services: Services, conversations: list[LocomoConversation], *,
                               pipelines: Sequence[str] = ("full",), close_sessions: bool = True,
                               show_progress: bool = True, depth: int = max(KS), keep: bool = False,
                               retrievers: dict[str, Retriever] | None = None,
                               ks: Sequence[int] | None = None) -> dict[str, dict[str, Any]]:
    """Ingest each conversation once (``keep``: into a kept vault, reused when it exists), then ask its questions
    through every pipeline (baselines first) or every given retriever, ``depth`` memories each; recall at ``ks``
    (default: ``ks_for(depth)``)."""
    from app.bench.full import FullRecall
    from app.bench.runtime import progress

    ks = tuple(ks or ks_for(depth))
    if retrievers is None:
        order = sorted(pipelines, key=lambda p: p == "full")
        retrievers = {p: FullRecall(services, writeback=False) if p == "full" and keep else make_retriever(services, p)
                      for p in order}
    else:
        order = list(retrievers)
    stats = IngestStats()
    details: dict[str, list[dict[str, Any]]] = {p: [] for p in order}
    total = sum(c.turn_count + sum(1 for q in c.qa if q.evidence) for c in conversations)
    bar = progress(total, f"locomo/{'+'.join(order)}") if show_progress else None
    try:
        for conv in conversations:
            async with _conversation_vault(services, conv, keep=keep, close=close_sessions, stats=stats) \
                    as (vault, turn_ids):
                if bar is not None:
                    bar.update(conv.turn_count)
                for p in order:
                    details[p] += await ask_conversation(
                        services, retrievers[p], vault, conv, turn_ids, ks=ks, depth=depth,
                        on_question=(lambda: bar.update(1)) if bar is not None and p == order[-1] else None)
                if bar is not None:
                    scored = [d for d in details[order[-1]] if d["category"] != ADVERSARIAL]
                    bar.set_postfix(r10=f"{mean(d['recall@10'] for d in scored):.3f}")
    finally:
        if bar is not None:
            bar.close()
    return {p: summarize(details[p], stats, ks) for p in order}


@asynccontextmanager
async def _conversation_vault(services: Services, conv: LocomoConversation, *, keep: bool, close: bool,
                              stats: IngestStats) -> AsyncIterator[tuple[Vault, dict[str, tuple[int, ...]]]]:
    """The conversation's vault, ingested, and each session's turn ids: a scratch vault dropped afterwards, or
    with ``keep`` the kept one (``bench-locomo-<id>``, ``-open`` without session close), ingested only when new."""
    from app.bench.runtime import scratch_vault

    if not keep:
        async with scratch_vault(services, "bench-locomo") as vault:
            turn_ids = await ingest_sessions(services, vault, conv.sessions, close=close, stats=stats)
            await analyze_blocks(services, [vault])
            yield vault, turn_ids
        return
    from app.vaults import get_or_create_vault

    vault = await get_or_create_vault(services.db, f"bench-locomo-{conv.id}{'' if close else '-open'}")
    rows = await services.db.fetchall("SELECT session_id, id FROM memvault.turn WHERE vault_id = %s "
                                      "ORDER BY session_id, seq", (vault.id,), vault_id=vault.id)
    if rows:
        turn_ids: dict[str, list[int]] = defaultdict(list)
        for r in rows:
            turn_ids[r["session_id"]].append(int(r["id"]))
        if sum(map(len, turn_ids.values())) != conv.turn_count:
            raise SystemExit(f"bench locomo --keep: vault {vault.name} holds {sum(map(len, turn_ids.values()))} "
                             f"turns, the conversation {conv.turn_count} (an ingest cut short?); drop it: "
                             f"SELECT memvault.drop_vault_v1('{vault.id}')")
        await ensure_rail2(services, vault.id)  # a vault kept before the second rail was configured: filled now
        yield vault, {k: tuple(v) for k, v in turn_ids.items()}
        return
    ids = await ingest_sessions(services, vault, conv.sessions, close=close, stats=stats)
    await analyze_blocks(services, [vault])
    yield vault, ids


async def ask_conversation(services: Services, retriever: Any, vault: Any, conv: LocomoConversation,
                           turn_ids: dict[str, tuple[int, ...]], *, ks: Sequence[int] = KS, depth: int = max(KS),
                           on_question: Any = None) -> list[dict[str, Any]]:
    """Ask one ingested conversation's questions (those with evidence) through ``retriever``, as of its last
    session, and score each: one row of ``details`` per question."""
    evidence_of: dict[str, EvidenceTurn] = {}  # dia_id -> archived turn id and text
    for s in conv.sessions:
        for t, tid in zip(s.turns, turn_ids.get(s.id, ()), strict=False):
            if t.dia_id:
                evidence_of[t.dia_id] = EvidenceTurn(tid, t.content)
    as_of = max(s.date for s in conv.sessions) if conv.sessions else None
    rows: list[dict[str, Any]] = []
    for qa in conv.qa:
        if not qa.evidence:
            continue
        if on_question is not None:
            on_question()
        evidence = [evidence_of[d] for d in qa.evidence if d in evidence_of]
        if not evidence:
            continue  # evidence ids that name no turn of the conversation
        hits, ms = await timed_recall(retriever, vault, qa.question, as_of=as_of, n=depth)
        memories = await memories_for(services, vault, hits)
        rows.append({
            "conversation": conv.id, "question": qa.question, "category": qa.category,
            "evidence": list(qa.evidence), "ms": round(ms, 2),
            "tokens@10": tokens_at(memories, 10),
            **{f"recall@{k}": evidence_coverage(memories, evidence, k) for k in ks},
            TEXT_METRIC: evidence_coverage(memories, evidence, 10, provenance=False),
            "top": [m.block_id for m in memories[:10]],
            "curve": [round(evidence_coverage(memories, evidence, k), 4) for k in range(1, max(KS) + 1)],
        })
    return rows


def summarize(details: list[dict[str, Any]], stats: IngestStats, ks: Sequence[int] = KS) -> dict[str, Any]:
    metrics = tuple(f"recall@{k}" for k in ks)
    scored = [d for d in details if d["category"] != ADVERSARIAL]
    by_cat: dict[int, list[dict]] = defaultdict(list)
    for d in details:
        by_cat[d["category"]].append(d)
    latencies = [d["ms"] for d in details]
    return {
        **{m: round(mean(d[m] for d in scored), 4) for m in (*metrics, TEXT_METRIC)},
        "ks": list(ks),
        "by_category": {str(c): {**{m: round(mean(d[m] for d in ds), 4) for m in metrics},
                                 "questions": len(ds), "name": CATEGORY_NAMES.get(c, str(c))}
                        for c, ds in sorted(by_cat.items())},
        "questions": len(scored),
        "tokens@10": round(mean(d["tokens@10"] for d in scored), 1),
        "ingest_turns_per_s": round(stats.turns_per_s, 1),
        "recall_p50_ms": round(percentile(latencies, 50), 2),
        "recall_p95_ms": round(percentile(latencies, 95), 2),
        "details": details,
    }


def format_table(result: dict[str, Any], title: str = "LoCoMo") -> str:
    metrics = tuple(f"recall@{k}" for k in result.get("ks", KS))
    lines = [title, f"{'category':<18}{'n':>5}" + "".join(f"{m:>12}" for m in metrics)]
    for c, row in result["by_category"].items():
        cells = "".join(f"{row[m]:>12.3f}" for m in metrics)
        lines.append(f"{c + ' ' + row['name']:<18}{row['questions']:>5}{cells}")
    cells = "".join(f"{result[m]:>12.3f}" for m in metrics)
    lines.append(f"{'all but 5':<18}{result['questions']:>5}{cells}")
    if TEXT_METRIC in result:
        lines.append(f"recall@10 by returned text alone (no provenance): {result[TEXT_METRIC]:.3f}")
    lines.append(f"tokens@10 {result['tokens@10']:.0f} · ingest {result['ingest_turns_per_s']:.1f} turns/s · "
                 f"recall p50 {result['recall_p50_ms']:.1f} ms, p95 {result['recall_p95_ms']:.1f} ms")
    return "\n".join(lines)
