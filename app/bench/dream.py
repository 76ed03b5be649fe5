"""``memvault bench dream FILE``: what one dream does to a vault, on LoCoMo or LongMemEval data.

Each conversation (LoCoMo) or question haystack (LongMemEval; ``--types`` picks the question types, knowledge
updates by default) goes into its own vault through the write track, sessions closed, its knowledge graph built as
the worker does; its questions are asked (the full read pipeline), the vault dreams once (``DreamLoop``, the gate
forced), and the questions are asked again (recall's access write-back is off in both passes, so the dream is the
only change between them). Printed: wall time per stage, conflicts found / resolved / queued,
communities and their sizes, and the retrieval metrics before and after (LoCoMo's evidence coverage, multi-hop
@10 among them; LongMemEval's session metrics, with, for knowledge updates, how often the current fact's session
ranks above the superseded one's).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from app.bench.metrics import mean
from app.services import Services

LME_TYPES_DEFAULT = ("knowledge-update",)


def add_parser(bench_sub: argparse._SubParsersAction) -> None:
    p = bench_sub.add_parser("dream", help="one dream per vault of a LoCoMo or LongMemEval file: stage times, "
                                           "conflicts, communities, retrieval before and after")
    p.add_argument("path", type=Path, help="a LoCoMo JSON file or a LongMemEval JSON(.gz) file")
    p.add_argument("--limit", type=int, help="only the first N conversations / questions of the file")
    p.add_argument("--types", default=",".join(LME_TYPES_DEFAULT),
                   help="LongMemEval question types, comma-separated, or 'all' (default knowledge-update)")
    p.add_argument("--thinking", choices=("fast", "slow"),
                   help="force the read track's mode in both passes (default: its own choice per question); slow "
                        "reads the graph layers, the communities among them (GLOBAL)")
    p.add_argument("--folds", action="store_true",
                   help="LoCoMo: leave-one-conversation-out, before and after @10 per conversation (fold) and "
                        "per category")
    p.add_argument("--tune", metavar="LEVER=V1,V2,...",
                   help="LoCoMo: candidate read settings (e.g. provenance.community_w=0,0.5; several levers "
                        "joined by ';' give every combination; the current value first), each asked before and "
                        "after the same dream; chosen on the other folds by recall@10 after the dream, reported "
                        "on the held-out one (implies --folds)")
    p.add_argument("--json", dest="json_path", type=Path, help="write the result to this file")
    p.set_defaults(func=handler)


def _is_locomo(path: Path) -> bool:
    from app.importers.datasets import _read_json

    rows = _read_json(path)
    return bool(rows) and isinstance(rows, list) and "conversation" in rows[0]


def handler(args: argparse.Namespace) -> int:
    from app.bench.runtime import conditions_note, run_bench, write_json

    if _is_locomo(args.path):
        from app.importers.datasets import load_locomo

        conversations = load_locomo(args.path, args.limit)
        from app.bench.folds import tune_grid

        grid = tune_grid(args.tune, "bench dream")

        async def core(services: Services) -> dict:
            return await run_locomo_dream(services, conversations, thinking=args.thinking, grid=grid)
    else:
        if args.folds or args.tune:
            raise SystemExit("bench dream: --folds and --tune are for LoCoMo files (one fold per conversation)")
        from app.importers.datasets import load_longmemeval

        types = None if args.types == "all" else set(args.types.split(","))
        questions = [q for q in load_longmemeval(args.path) if types is None or q.type in types]
        questions = questions[:args.limit] if args.limit else questions

        async def core(services: Services) -> dict:
            return await run_longmemeval_dream(services, questions, thinking=args.thinking)

    result = run_bench(core)
    mode = f", thinking {args.thinking}" if args.thinking else ""
    print(format_table(result, title=f"dream over {args.path.name}{mode}{conditions_note(graph=True)}"))
    if result["dataset"] == "locomo" and (args.folds or args.tune):
        result.update(locomo_dream_folds(result, conversations))
        print(format_folds(result))
    write_json(args.json_path, result)  # with the per-conversation / per-question details
    return 0


async def _dream(services: Services, vault: Any) -> tuple[dict[str, Any], float]:
    from app.background.dream import DreamLoop

    t0 = time.perf_counter()
    outcome = await DreamLoop(services).run(vault, trigger="bench", force=True)
    return outcome.run, time.perf_counter() - t0


def _dream_row(run: dict[str, Any], seconds: float) -> dict[str, Any]:
    report = run["report"]
    return {"seconds": round(seconds, 2), "stage_ms": report["stage_ms"], "conflicts": report["conflicts"],
            "communities": report["communities"], "edges": report["edges"],
            "community_summaries": report["community_summaries"], "discoveries": report["discoveries_added"]}


def _dream_totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    stage_ms: dict[str, list[float]] = defaultdict(list)
    found: dict[str, int] = defaultdict(int)
    resolved: dict[str, int] = defaultdict(int)
    for r in rows:
        for k, v in r["stage_ms"].items():
            stage_ms[k].append(v or 0.0)
        for k, v in r["conflicts"]["found"].items():
            found[k] += v
        for k, v in r["conflicts"]["resolved"].items():
            resolved[k] += v
    return {
        "dreams": len(rows),
        "dream_seconds_mean": round(mean(r["seconds"] for r in rows), 2),
        "dream_seconds_max": round(max((r["seconds"] for r in rows), default=0.0), 2),
        "stage_ms_mean": {k: round(mean(v), 1) for k, v in stage_ms.items()},
        "conflicts_found": dict(found), "conflicts_resolved": dict(resolved),
        "conflicts_queued": sum(r["conflicts"]["queued"] for r in rows),
        "community_sizes": [r["communities"].get("1.0", []) for r in rows],
        "edges_kept": sum(r["edges"].get("kept", 0) for r in rows),
    }


async def run_locomo_dream(services: Services, conversations: list, *, thinking: str | None = None,
                           grid: dict[str, Any] | None = None) -> dict[str, Any]:
    """Each conversation ingested, asked, dreamed, asked again; with ``grid`` (candidate ReadConfigs), every
    setting asked in both passes on the same vault, and the first setting's numbers on top."""
    from app.bench.full import FullRecall, grid_recalls
    from app.bench.harness import IngestStats, analyze_blocks, ingest_sessions
    from app.bench.locomo import ADVERSARIAL, ask_conversation, summarize
    from app.bench.runtime import scratch_vault

    # Write-back off: the questions of the first pass must not change the second.
    retrievers = grid_recalls(services, grid) if grid else {"default": FullRecall(services, thinking,
                                                                                  writeback=False)}
    stats = IngestStats()
    before: dict[str, list[dict]] = {name: [] for name in retrievers}
    after: dict[str, list[dict]] = {name: [] for name in retrievers}
    dreams: list[dict] = []
    for conv in conversations:
        async with scratch_vault(services, "bench-dream") as vault:
            turn_ids = await ingest_sessions(services, vault, conv.sessions, close=True, stats=stats,
                                             graph=True)  # a dream reads the graph
            await analyze_blocks(services, [vault])
            for name, retriever in retrievers.items():
                before[name] += await ask_conversation(services, retriever, vault, conv, turn_ids)
            run, seconds = await _dream(services, vault)
            dreams.append({"conversation": conv.id, **_dream_row(run, seconds)})
            for name, retriever in retrievers.items():
                after[name] += await ask_conversation(services, retriever, vault, conv, turn_ids)
    first = next(iter(retrievers))
    b, a = summarize(before[first], stats), summarize(after[first], stats)
    keep = ("recall@5", "recall@10", "recall@25", "text_recall@10")
    multi_hop = ([d for d in before[first] if d["category"] == 1], [d for d in after[first] if d["category"] == 1])
    return {
        "dataset": "locomo", **_dream_totals(dreams),
        "before": {k: b[k] for k in keep}, "after": {k: a[k] for k in keep},
        "multi_hop@10": {"before": round(mean(d["recall@10"] for d in multi_hop[0]), 4),
                         "after": round(mean(d["recall@10"] for d in multi_hop[1]), 4),
                         "questions": len(multi_hop[0])},
        "questions": b["questions"], "adversarial_left_out": ADVERSARIAL,
        "details": dreams, "settings": list(retrievers),
        "by_setting": {name: {"before": before[name], "after": after[name]} for name in retrievers},
    }


def locomo_dream_folds(result: dict[str, Any], conversations: list) -> dict[str, Any]:
    """Before and after @10 per conversation (fold) and per category, for every setting; with several settings,
    each fold's setting chosen on the other folds by @10 after the dream (``cross_validate``), and the held-out
    fold's before / after under it."""
    from app.bench.folds import cross_validate
    from app.bench.locomo import CATEGORY_NAMES, _objective, locomo_fold_spread, locomo_folds

    folds = locomo_folds(conversations)
    per_setting = {}
    for name, sides in result["by_setting"].items():
        per_setting[name] = {side: locomo_fold_spread(sides[side], folds)["folds"] for side in ("before", "after")}
    out: dict[str, Any] = {"folds": per_setting, "category_names": {str(c): n for c, n in CATEGORY_NAMES.items()}}
    if len(per_setting) > 1:
        cv = cross_validate({n: s["after"] for n, s in result["by_setting"].items()}, folds,
                            lambda d: d["conversation"], _objective)
        held = []
        for f, fold in zip(cv["folds"], folds, strict=True):
            sides = result["by_setting"][f["chosen"]]
            row = {"fold": fold.name, "chosen": f["chosen"]}
            for side in ("before", "after"):
                ds = [d for d in sides[side] if d["conversation"] in fold.test]
                row[side] = round(_objective(ds), 4)
            held.append(row)
        out["cv"] = {**cv, "held_out": held}
    return out


def format_folds(result: dict[str, Any]) -> str:
    names = result["category_names"]
    lines = ["leave-one-conversation-out: recall@10 before -> after the dream, per fold (and per category)"]
    for setting, sides in result["folds"].items():
        lines.append(f"  {setting}")
        for fb, fa in zip(sides["before"], sides["after"], strict=True):
            cats = "  ".join(
                f"{names.get(c, c)} {fb['by_category'].get(c, {}).get('recall@10', 0.0):.3f}->"
                f"{fa['by_category'].get(c, {}).get('recall@10', 0.0):.3f}"
                for c in sorted(fa["by_category"]) if c != "5")
            lines.append(f"    {fb['fold']:<14} {fb['recall@10']:.3f} -> {fa['recall@10']:.3f} "
                         f"({fa['recall@10'] - fb['recall@10']:+.3f})   {cats}")
    if "cv" in result:
        cv = result["cv"]
        lines.append("  chosen on the other folds (by @10 after the dream), held-out fold before -> after:")
        for row in cv["held_out"]:
            lines.append(f"    {row['fold']:<14} {row['chosen']:<40} {row['before']:.3f} -> {row['after']:.3f} "
                         f"({row['after'] - row['before']:+.3f})")
        lines.append(f"  after the dream: cross-validated {cv['cross_validated']:.4f}, in-sample "
                     f"{cv['in_sample']:.4f} ({cv['in_sample_setting']})")
    return "\n".join(lines)


def current_above_superseded(q: Any, ranked: list[str]) -> bool | None:
    """For a question with gold sessions of different dates: does the newest gold session (the current fact)
    rank above every older one (the superseded)? None when there is no older gold session."""
    dates = {s.file_id: s.date for s in q.sessions}
    gold = sorted((g for g in q.answer_session_ids if g in dates), key=lambda g: dates[g])
    if len(gold) < 2 or dates[gold[0]] == dates[gold[-1]]:
        return None
    current, older = gold[-1], set(gold[:-1])
    if current not in ranked:
        return False
    pos = ranked.index(current)
    return not any(r in older for r in ranked[:pos])


async def run_longmemeval_dream(services: Services, questions: list, *, thinking: str | None = None
                               ) -> dict[str, Any]:
    from app.bench.full import FullRecall
    from app.bench.harness import IngestStats, analyze_blocks, ingest_sessions
    from app.bench.longmemeval import METRICS, _question_detail, _scored
    from app.bench.runtime import scratch_vault

    retriever = FullRecall(services, thinking, writeback=False)  # the questions of the first pass must not change the second
    stats = IngestStats()
    rows: list[dict] = []
    dreams: list[dict] = []
    for q in _scored(questions):
        async with scratch_vault(services, "bench-dream") as vault:
            await ingest_sessions(services, vault, q.sessions, close=True, stats=stats,
                                  graph=True)  # a dream reads the graph
            await analyze_blocks(services, [vault])
            b = await _question_detail(services, retriever, vault, q, "after-history")
            run, seconds = await _dream(services, vault)
            dreams.append({"question_id": q.id, **_dream_row(run, seconds)})
            a = await _question_detail(services, retriever, vault, q, "after-history")
            rows.append({"question_id": q.id, "type": q.type, "before": b, "after": a,
                         "current_first_before": current_above_superseded(q, b["ranked"]),
                         "current_first_after": current_above_superseded(q, a["ranked"])})
    judged_b = [r["current_first_before"] for r in rows if r["current_first_before"] is not None]
    judged_a = [r["current_first_after"] for r in rows if r["current_first_after"] is not None]
    return {
        "dataset": "longmemeval", **_dream_totals(dreams),
        "before": {m: round(mean(r["before"][m] for r in rows), 4) for m in METRICS},
        "after": {m: round(mean(r["after"][m] for r in rows), 4) for m in METRICS},
        "current_above_superseded": {"before": round(mean(map(float, judged_b)), 4) if judged_b else None,
                                     "after": round(mean(map(float, judged_a)), 4) if judged_a else None,
                                     "questions": len(judged_a)},
        "questions": len(rows), "types": sorted({r["type"] for r in rows}),
        "details": [{**d, "current_first": (r["current_first_before"], r["current_first_after"]),
                     "gold": r["before"]["gold"], "ranked": (r["before"]["ranked"][:10], r["after"]["ranked"][:10]),
                     "top": (r["before"]["top"], r["after"]["top"])}
                    for d, r in zip(dreams, rows, strict=True)],
    }


def format_table(result: dict[str, Any], title: str) -> str:
    lines = [title, f"{result['dreams']} dreams: mean {result['dream_seconds_mean']:.1f} s, max "
                    f"{result['dream_seconds_max']:.1f} s"]
    lines.append("stage (mean ms): " + ", ".join(f"{k} {v:.0f}" for k, v in result["stage_ms_mean"].items()))
    lines.append(f"conflicts found {json.dumps(result['conflicts_found'])}, resolved "
                 f"{json.dumps(result['conflicts_resolved'])}, queued {result['conflicts_queued']}")
    lines.append(f"edges kept {result['edges_kept']}; communities at resolution 1.0 per vault (count: largest "
                 "sizes): " + "; ".join(f"{len(sizes)}: {','.join(map(str, sizes[:5]))}" if sizes else "-"
                                       for sizes in result["community_sizes"]))
    keys = list(result["before"])
    lines.append(f"{'':<8}" + "".join(f"{k:>16}" for k in keys))
    for side in ("before", "after"):
        lines.append(f"{side:<8}" + "".join(f"{result[side][k]:>16.3f}" for k in keys))
    if "multi_hop@10" in result:
        m = result["multi_hop@10"]
        lines.append(f"multi-hop @10 ({m['questions']} questions): {m['before']:.3f} -> {m['after']:.3f}")
    if "current_above_superseded" in result:
        c = result["current_above_superseded"]
        fmt = lambda x: "-" if x is None else f"{x:.3f}"  # noqa: E731
        lines.append(f"current fact's session above the superseded one's ({c['questions']} questions with both): "
                     f"{fmt(c['before'])} -> {fmt(c['after'])}")
    return "\n".join(lines)
