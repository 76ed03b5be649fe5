"""``memvault bench report``: run the dev splits and write ``docs/benchmarks.md`` with tables and plots.

Runs, timing each: LongMemEval dev and LoCoMo dev (ingested once each, recalled through every pipeline:
dense, sparse, rrf, full), ingest, then the guard, latency (10k memories) and embed benchmarks of their own
modules when present (through their command lines, so they run exactly as a user runs them). Next to our
numbers it prints the published ones with their conditions.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.bench.harness import PIPELINES

REPO = Path(__file__).resolve().parents[2]
BUDGET_S = 20 * 60

PUBLISHED_LME = [
    ("LongMemEval paper, Stella V5 1.5B", "M split (harder, ~500 sessions per question), all questions",
     {"recall_all@5": 0.706, "recall_all@10": 0.783}),
    ("MemPalace (own claim)", "LongMemEval_S, all 500 questions, raw", {"recall_any@5": 0.966}),
    ("MemPalace 3.11, measured here", "this dev file, this scoring (session documents of user turns, MiniLM)",
     {"recall_any@5": "0.948-0.966", "recall_all@10": 0.966, "ndcg@10": "0.932-0.939"}),
]
PUBLISHED_LOCOMO = [
    ("LoCoMo paper, DRAGON dialog retriever", "all 10 conversations, dialog turns as units",
     {"recall@5": 0.567, "recall@10": 0.662, "recall@25": 0.767}),
    ("MemPalace 3.11, measured here (raw)", "this dev file, turns as units", {"recall@10": 0.568}),
    ("MemPalace 3.11, measured here (hybrid)", "this dev file, turns as units", {"recall@10": 0.661}),
    ("MemPalace 3.11, measured here", "this dev file, whole sessions as units (~20x tokens per answer)",
     {"recall@10": 0.900}),
]
PUBLISHED_LATENCY = [
    ("Mem0 paper: Mem0 search", "LoCoMo, their hardware, p50 / p95", "148 / 200 ms"),
    ("Mem0 paper: Zep search", "LoCoMo, their hardware, p50 / p95", "513 / 778 ms"),
]


def add_parser(bench_sub: argparse._SubParsersAction) -> None:
    from app.bench.runtime import EVAL_DIR

    p = bench_sub.add_parser("report", help="run the dev splits and write docs/benchmarks.md with plots")
    p.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md", help="markdown file to write")
    p.add_argument("--eval-dir", type=Path, default=EVAL_DIR, help="directory of the dev files")
    p.add_argument("--pipelines", default=",".join(PIPELINES), help="comma-separated (default all)")
    p.add_argument("--latency-memories", default="10000",
                   help="comma-separated vault sizes for the latency benchmark (default 10000)")
    p.add_argument("--skip", default="",
                   help="comma-separated parts to skip: longmemeval,locomo,ingest,guard,latency,embed")
    p.add_argument("--limit", type=int, help="LongMemEval questions / LoCoMo conversations (a quick run)")
    p.add_argument("--per-type", type=int,
                   help="LongMemEval: the first N questions of each type (a quick run)")
    p.add_argument("--close-sessions", action=argparse.BooleanOptionalAction, default=True,
                   help="LoCoMo: close each session after ingest (atomic units + summary); default on")
    p.add_argument("--lme-close-sessions", action=argparse.BooleanOptionalAction, default=False,
                   help="LongMemEval: close each session too; default off (it doubles the ingest time of "
                        "~29k turns and does not fit the 20-minute budget)")
    p.add_argument("--jobs", type=int, default=2, help="LongMemEval: concurrent haystack writers (default 2)")
    p.add_argument("--ingest-turns", type=int, default=1000,
                   help="turns for the ingest benchmark (default 1000: the rate is stable by then)")
    p.add_argument("--guard-limit", type=int, help="at most N texts per guard input (a quick run)")
    p.add_argument("--lme-results", type=Path, help="render LongMemEval from a saved multi-pipeline result")
    p.add_argument("--locomo-results", type=Path, help="render LoCoMo from a saved multi-pipeline result")
    p.add_argument("--reuse", type=Path,
                   help="a previous --results file: its ingest/guard/latency/embed parts are reused, not rerun")
    p.add_argument("--note", action="append", default=[], help="a line for the report's conditions")
    p.add_argument("--results", type=Path, help="also write every result as JSON to this file")
    p.set_defaults(func=handler)


def _other_bench(name: str, argv: list[str]) -> tuple[dict | None, str, str | None]:
    """Run another benchmark module through its own command line; (json keys, stdout, note)."""
    import importlib
    import tempfile

    module = importlib.import_module(f"app.bench.{name}")  # one of this package's benchmarks; never skipped
    parser = argparse.ArgumentParser(prog="memvault bench")
    module.add_parser(parser.add_subparsers(dest="bench"))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"{name}.json"
        buf = io.StringIO()
        try:
            args = parser.parse_args([name, *argv, "--json", str(out)])
        except SystemExit:
            return None, "", f"`memvault bench {name} {' '.join(argv)} --json FILE` is not accepted: skipped"
        with contextlib.redirect_stdout(buf):
            code = args.func(args)
        data = json.loads(out.read_text()) if out.exists() else None
        note = None if code == 0 else f"exited with status {code}"
        return data, buf.getvalue(), note


def handler(args: argparse.Namespace) -> int:
    pipelines = [p for p in args.pipelines.split(",") if p]
    skip = {s for s in args.skip.split(",") if s}
    runs: dict[str, Any] = {"pipelines": pipelines, "timings_s": {}, "notes": {}, "outputs": {},
                            "conditions": list(args.note),
                            "settings": {"lme_close": args.lme_close_sessions, "locomo_close": args.close_sessions,
                                         "jobs": args.jobs}}
    started = time.perf_counter()
    if args.lme_results:
        runs["longmemeval"] = _saved(runs, args.lme_results)
    if args.locomo_results:
        runs["locomo"] = _saved(runs, args.locomo_results)
    if not ({"longmemeval", "locomo"} <= skip) and not (args.lme_results and args.locomo_results):
        asyncio.run(_retrieval(args, runs, pipelines, skip))
    reused = json.loads(args.reuse.read_text()) if args.reuse else {}
    for name in ("ingest", "guard", "latency", "embed"):
        if reused.get(name):
            runs[name] = reused[name]
            skip.add(name)
            for part in ("timings_s", "outputs", "notes"):
                runs[part].update({k: v for k, v in reused.get(part, {}).items() if k.startswith(name)})
    for name, argv in _other_benches(args, skip):
        key = f"{name}_{argv[1]}" if name == "latency" else name
        t0 = time.perf_counter()
        data, out, note = _other_bench(name, argv)
        runs["timings_s"][key] = round(time.perf_counter() - t0, 1)
        print(f"report: {key} took {runs['timings_s'][key]:.0f} s", file=sys.stderr)
        runs["outputs"][key] = out
        if note:
            runs["notes"][key] = note
        if name == "latency":
            runs.setdefault("latency", []).extend([data] if data else [])
        else:
            runs[name] = data
    runs["run_s"] = round(time.perf_counter() - started, 1)
    runs["total_s"] = round(sum(runs["timings_s"].values()), 1)

    from app.bench.plots import write_plots

    images = write_plots(runs, args.out.parent / "img")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(runs, images, args.out.parent) + kept_sections(args.out), encoding="utf-8")
    print(f"wrote {args.out} ({runs['total_s']:.0f} s of benchmarks; budget {BUDGET_S} s)", file=sys.stderr)
    if args.results:
        args.results.write_text(json.dumps(runs, indent=1, default=str), encoding="utf-8")
    return 0


def _saved(runs: dict[str, Any], path: Path) -> dict[str, Any]:
    """A multi-pipeline result saved earlier (``{pipeline: result}``, optional ``_wall_s``)."""
    data = json.loads(path.read_text())
    runs["timings_s"][path.stem] = round(float(data.pop("_wall_s", 0.0)), 1)
    return {k: v for k, v in data.items() if not k.startswith("_")}


async def _retrieval(args: argparse.Namespace, runs: dict[str, Any], pipelines: list[str],
                     skip: set[str]) -> None:
    from app.importers.datasets import load_locomo, load_longmemeval, per_type
    from app.bench.locomo import run_locomo_pipelines
    from app.bench.longmemeval import run_longmemeval_pipelines
    from app.bench.runtime import bench_services

    ev = args.eval_dir
    async with bench_services() as services:
        if "longmemeval" not in skip and not args.lme_results:
            questions = load_longmemeval(ev / "longmemeval_s_dev.json.gz", args.limit)
            if args.per_type:
                questions = per_type(questions, args.per_type)
            t0 = time.perf_counter()
            runs["longmemeval"] = await run_longmemeval_pipelines(
                services, questions, pipelines=pipelines, close_sessions=args.lme_close_sessions, jobs=args.jobs)
            runs["timings_s"]["longmemeval"] = round(time.perf_counter() - t0, 1)
        if "locomo" not in skip and not args.locomo_results:
            t0 = time.perf_counter()
            runs["locomo"] = await run_locomo_pipelines(
                services, load_locomo(ev / "locomo_dev.json", args.limit), pipelines=pipelines,
                close_sessions=args.close_sessions)
            runs["timings_s"]["locomo"] = round(time.perf_counter() - t0, 1)


def _other_benches(args: argparse.Namespace, skip: set[str]) -> list[tuple[str, list[str]]]:
    ev = args.eval_dir
    out: list[tuple[str, list[str]]] = []
    if "ingest" not in skip:
        out.append(("ingest", ["--turns", str(args.ingest_turns)]))
    if "guard" not in skip:
        argv = ["--attacks", str(ev / "injection_attacks_dev.jsonl"), "--benign",
                str(ev / "injection_hard_benign_dev.jsonl"), "--chat", str(ev / "locomo_dev.json"),
                str(ev / "longmemeval_s_dev.json.gz")]
        out.append(("guard", argv + (["--limit", str(args.guard_limit)] if args.guard_limit else [])))
    if "latency" not in skip:
        out += [("latency", ["--memories", n]) for n in args.latency_memories.split(",") if n]
    if "embed" not in skip:
        out.append(("embed", []))
    return out


# --- markdown -----------------------------------------------------------------------------------------------

def _f(x: Any) -> str:
    """Scores (at most 1) with three decimals; counts and milliseconds with one, or none from 100 up."""
    if isinstance(x, float):
        return f"{x:.3f}" if abs(x) <= 1.0 else f"{x:.1f}" if abs(x) < 100 else f"{x:.0f}"
    return "" if x is None else str(x)


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(_f(c) for c in r) + " |" for r in rows]
    return out


def _published(rows: list[tuple[str, str, dict[str, Any]]]) -> list[str]:
    return _table(["system", "conditions", "numbers"],
                  [[s, c, ", ".join(f"{k} {v}" for k, v in nums.items())] for s, c, nums in rows])


def _img(images: dict[str, Path], key: str, base: Path, alt: str) -> list[str]:
    return [f"![{alt}]({images[key].relative_to(base)})", ""] if key in images else []


def kept_sections(path: Path) -> str:
    """Sections other benchmarks write into the file between ``<!-- keep:NAME -->`` and ``<!-- /keep:NAME -->``
    (``bench load``): carried over when the report rewrites the file."""
    import re

    text = path.read_text(encoding="utf-8") if path.exists() else ""
    kept = re.findall(r"<!-- keep:([\w-]+) -->.*?<!-- /keep:\1 -->", text, flags=re.S)
    blocks = [re.search(rf"<!-- keep:{name} -->.*?<!-- /keep:{name} -->", text, flags=re.S).group(0)
              for name in kept]
    return "".join(f"\n{b}\n" for b in blocks)


def render(runs: dict[str, Any], images: dict[str, Path], base: Path) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    t = runs["timings_s"]
    lines = [
        "# Benchmarks",
        "",
        f"Generated by `memvault bench report` on {now} ({platform.machine()}, {_cpus()} cores, Python "
        f"{platform.python_version()}). Data: the dev splits in `../shared/eval` (its README gives the "
        "scoring conventions). Every number comes from the real write track, read track and database (a "
        "dedicated `memvault_bench` database) with the offline default models (USE embedder, heuristic LLM, "
        "no reranker).",
        "",
        f"Benchmark wall time: **{runs['total_s'] / 60:.1f} min** (budget: 20 min for all dev-split "
        "commands): " + ", ".join(f"{k} {v:.0f} s" for k, v in t.items()) + ".",
        "",
    ]
    settings = runs.get("settings") or {}
    conditions = [*([f"LongMemEval sessions closed after ingest: {'yes' if settings['lme_close'] else 'no'}; "
                     f"LoCoMo sessions closed: {'yes' if settings['locomo_close'] else 'no'}; LongMemEval "
                     f"haystacks ingested by {settings['jobs']} concurrent writers, recalls run alone."]
                    if settings else []), *runs.get("conditions", [])]
    if conditions:
        lines += ["Conditions of this run:", "", *[f"- {c}" for c in conditions], ""]
    lines += [
        "Pipelines: `dense` (exact cosine over the block embeddings), `sparse` (Postgres full text: OR of "
        "the query's lexemes ranked by ts_rank_cd), `rrf` (top 100 of both fused with 1/(60+rank)); these "
        "three are plain SQL without scoring or graph (`app/bench/baselines.py`). `full` is the read track's "
        "`recall` (intent, fast search, 11 scoring stages, rerank gate, formatter; cascade and CRAG for slow "
        "intents).",
        "",
    ]
    lines += _lme_section(runs, images, base) + _locomo_section(runs, images, base)
    lines += _latency_section(runs, images, base)
    for name, title in (("ingest", "Ingest"), ("guard", "Injection guard"), ("embed", "Embedders")):
        if not runs.get(name) and name not in runs["notes"] and not runs["outputs"].get(name):
            continue
        lines += [f"## {title}", ""]
        if runs["notes"].get(name):
            lines += [f"Note: {runs['notes'][name]}.", ""]
        if runs["outputs"].get(name):
            lines += ["```", runs["outputs"][name].strip()[:6000], "```", ""]
        elif runs.get(name):
            lines += ["```json", json.dumps(runs[name], indent=1, default=str)[:6000], "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def _pipeline_table(res: dict[str, dict[str, Any]], metrics: tuple[str, ...]) -> list[str]:
    """One row per pipeline: its scores, context cost and recall latency."""
    return _table(["pipeline", *metrics, "tokens@10", "p50 ms", "p95 ms"],
                  [[p, *[r[m] for m in metrics], r["tokens@10"], r["recall_p50_ms"], r["recall_p95_ms"]]
                   for p, r in res.items()])


def _lme_section(runs: dict[str, Any], images: dict[str, Path], base: Path) -> list[str]:
    from app.bench.longmemeval import METRICS

    res = runs.get("longmemeval")
    if not res:
        return []
    first = next(iter(res.values()))
    lines = ["## LongMemEval (session recall)", "",
             f"{first['questions']} questions scored (abstention questions are not). Each question's "
             "haystack (~48 sessions, user and assistant turns) is ingested into a fresh vault and the "
             "question is recalled after that history, as of the later of its date and its last session's "
             "(5 of the 60 dev haystacks hold sessions dated hours after their question, some of them gold). "
             "@k = the top k distinct sessions, ranked by first "
             "appearance.", ""]
    lines += _pipeline_table(res, METRICS)
    lines += ["", f"Ingest: {first['ingest_turns_per_s']:.1f} turns/s through the write track.", ""]
    name = "full" if "full" in res else next(iter(res))
    lines += [f"By question type ({name}):", ""]
    lines += _table(["type", "n", *METRICS],
                    [[ty, row["questions"], *[row[m] for m in METRICS]]
                     for ty, row in res[name]["by_type"].items()])
    lines += ["", "Published, with their conditions:", "", *_published(PUBLISHED_LME), ""]
    return lines + _img(images, "lme", base, "LongMemEval recall@k")


def _locomo_section(runs: dict[str, Any], images: dict[str, Path], base: Path) -> list[str]:
    from app.bench.locomo import METRICS, TEXT_METRIC

    res = runs.get("locomo")
    if not res:
        return []
    first = next(iter(res.values()))
    lines = ["## LoCoMo (evidence-turn coverage)", "",
             f"One vault per conversation, sessions at their dates; {first['questions']} questions with "
             "evidence outside category 5. recall@k = the fraction of a question's evidence turns covered by "
             "the top-k memories (provenance points at the turn, or the memory contains its text); "
             f"{TEXT_METRIC} counts only returned text that contains the whole turn (a sentence-level unit "
             "drawn from a longer turn does not count).", ""]
    with_text = all(TEXT_METRIC in r for r in res.values())
    lines += _pipeline_table(res, (*METRICS, TEXT_METRIC) if with_text else METRICS)
    name = "full" if "full" in res else next(iter(res))
    lines += ["", f"Ingest: {first['ingest_turns_per_s']:.1f} turns/s. By category ({name}):", ""]
    lines += _table(["category", "n", *METRICS],
                    [[f"{c} {row['name']}", row["questions"], *[row[m] for m in METRICS]]
                     for c, row in res[name]["by_category"].items()])
    lines += ["", "Published, with their conditions:", "", *_published(PUBLISHED_LOCOMO), ""]
    return lines + _img(images, "locomo", base, "LoCoMo coverage@k")


def _latency_section(runs: dict[str, Any], images: dict[str, Path], base: Path) -> list[str]:
    rows = []
    for name, size in (("longmemeval", "one question's haystack"), ("locomo", "one conversation")):
        rows += [[f"{name} recall, {p}", size, r["recall_p50_ms"], r["recall_p95_ms"]]
                 for p, r in (runs.get(name) or {}).items()]
    for lat in runs.get("latency") or []:
        n = lat.get("memories")
        rows.append(["latency bench, fast", f"{n} memories", lat.get("fast_p50_ms"), lat.get("fast_p95_ms")])
        rows.append(["latency bench, slow", f"{n} memories", lat.get("slow_p50_ms"), lat.get("slow_p95_ms")])
    lines = ["## Latency", "", *_table(["what", "vault", "p50 ms", "p95 ms"], rows), ""]
    lines += ["Published, with their conditions:", ""]
    lines += _table(["system", "conditions", "p50 / p95"], [list(r) for r in PUBLISHED_LATENCY])
    lines.append("")
    for key, note in runs["notes"].items():
        if key.startswith("latency"):
            lines += [f"Note ({key}): {note}.", ""]
    for key, out in runs["outputs"].items():
        if key.startswith("latency") and out:
            lines += ["```", out.strip()[:3000], "```", ""]
    return lines + _img(images, "latency", base, "latency against N")


def _cpus() -> int:
    import os

    return os.cpu_count() or 0
