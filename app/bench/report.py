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
    p.add_argument("--skip", default="", help="comma-separated parts to skip: longmemeval,locomo,ingest,guard,"
                   "latency,embed")
    p.add_argument("--limit", type=int, help="LongMemEval questions / LoCoMo conversations (a quick run)")
    p.add_argument("--results", type=Path, help="also write every result as JSON to this file")
    p.set_defaults(func=handler)


def _other_bench(name: str, argv: list[str]) -> tuple[dict | None, str, str | None]:
    """Run another benchmark module through its own command line; (json keys, stdout, note)."""
    import importlib
    import tempfile

    try:
        module = importlib.import_module(f"app.bench.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"app.bench.{name}":
            return None, "", f"`app.bench.{name}` is not in this checkout yet: skipped"
        raise
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
    from app.bench.data import load_locomo, load_longmemeval
    from app.bench.locomo import run_locomo_pipelines
    from app.bench.longmemeval import run_longmemeval_pipelines
    from app.bench.runtime import bench_services

    pipelines = [p for p in args.pipelines.split(",") if p]
    skip = {s for s in args.skip.split(",") if s}
    ev = args.eval_dir
    runs: dict[str, Any] = {"pipelines": pipelines, "timings_s": {}, "notes": {}, "outputs": {}}
    started = time.perf_counter()

    def timed(name: str, fn):
        t0 = time.perf_counter()
        try:
            return fn()
        finally:
            runs["timings_s"][name] = round(time.perf_counter() - t0, 1)
            print(f"report: {name} took {runs['timings_s'][name]:.0f} s", file=sys.stderr)

    async def retrieval() -> None:
        async with bench_services() as services:
            if "longmemeval" not in skip:
                path = ev / "longmemeval_s_dev.json.gz"
                t0 = time.perf_counter()
                runs["longmemeval"] = await run_longmemeval_pipelines(
                    services, load_longmemeval(path, args.limit), pipelines=pipelines)
                runs["timings_s"]["longmemeval"] = round(time.perf_counter() - t0, 1)
                runs["longmemeval_file"] = path.name
            if "locomo" not in skip:
                path = ev / "locomo_dev.json"
                t0 = time.perf_counter()
                runs["locomo"] = await run_locomo_pipelines(services, load_locomo(path, args.limit),
                                                            pipelines=pipelines)
                runs["timings_s"]["locomo"] = round(time.perf_counter() - t0, 1)
                runs["locomo_file"] = path.name

    asyncio.run(retrieval())
    if "ingest" not in skip:
        data, out, note = timed("ingest", lambda: _other_bench("ingest", ["--turns", "3000"]))
        runs["ingest"], runs["outputs"]["ingest"] = data, out
        if note:
            runs["notes"]["ingest"] = note
    if "guard" not in skip:
        argv = ["--attacks", str(ev / "injection_attacks_dev.jsonl"), "--benign",
                str(ev / "injection_hard_benign_dev.jsonl"), "--chat", str(ev / "locomo_dev.json"),
                str(ev / "longmemeval_s_dev.json.gz")]
        data, out, note = timed("guard", lambda: _other_bench("guard", argv))
        runs["guard"], runs["outputs"]["guard"] = data, out
        if note:
            runs["notes"]["guard"] = note
    if "latency" not in skip:
        runs["latency"] = []
        for n in [int(x) for x in args.latency_memories.split(",") if x]:
            data, out, note = timed(f"latency_{n}", lambda n=n: _other_bench("latency", ["--memories", str(n)]))
            if data:
                runs["latency"].append(data)
            runs["outputs"][f"latency_{n}"] = out
            if note:
                runs["notes"][f"latency_{n}"] = note
    if "embed" not in skip:
        data, out, note = timed("embed", lambda: _other_bench("embed", []))
        runs["embed"], runs["outputs"]["embed"] = data, out
        if note:
            runs["notes"]["embed"] = note
    runs["total_s"] = round(time.perf_counter() - started, 1)

    from app.bench.plots import write_plots

    img_dir = args.out.parent / "img"
    images = write_plots(runs, img_dir)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(runs, images, args.out.parent), encoding="utf-8")
    print(f"wrote {args.out} ({runs['total_s']:.0f} s in all; budget {BUDGET_S} s)", file=sys.stderr)
    if args.results:
        slim = {k: v for k, v in runs.items()}
        args.results.write_text(json.dumps(slim, indent=1, default=str), encoding="utf-8")
    return 0


# --- markdown -----------------------------------------------------------------------------------------------

def _f(x: Any, digits: int = 3) -> str:
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return "" if x is None else str(x)


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(_f(c) for c in r) + " |" for r in rows]
    return out


def render(runs: dict[str, Any], images: dict[str, Path], base: Path) -> str:
    from app.bench.locomo import METRICS as LOCOMO_METRICS
    from app.bench.longmemeval import METRICS as LME_METRICS

    t = runs["timings_s"]
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Benchmarks",
        "",
        f"Generated by `memvault bench report` on {now} ({platform.machine()}, {_cpus()} cores, "
        f"Python {platform.python_version()}). Data: the dev splits in `../shared/eval` (see its README for the "
        "scoring conventions). Every number below comes from the real write track, read track and database "
        "(a dedicated `memvault_bench` database); regenerate with `memvault bench report`.",
        "",
        f"Wall time of the whole run: **{runs['total_s'] / 60:.1f} min** (budget 20 min): "
        + ", ".join(f"{k} {v:.0f} s" for k, v in t.items()) + ".",
        "",
        "Pipelines: `dense` (cosine over the block embeddings), `sparse` (Postgres full text, OR of the query's "
        "lexemes ranked by ts_rank_cd), `rrf` (both fused with 1/(60+rank)), all three plain SQL without scoring "
        "or graph (`app/bench/baselines.py`); `full` is the read track's `recall` (intent, fast search, 11 "
        "scoring stages, rerank gate, formatter; cascade and CRAG for slow intents).",
        "",
    ]
    if "longmemeval" in runs:
        res = runs["longmemeval"]
        any_p = next(iter(res.values()))
        lines += ["## LongMemEval (session recall)", "",
                  f"`{runs.get('longmemeval_file')}`: {any_p['questions']} questions scored (abstention questions "
                  f"excluded: {any_p.get('skipped_abstention', 0)}); each question's ~48-session haystack ingested "
                  "into a fresh vault (user and assistant turns, sessions closed: atomic units and a summary), "
                  "recalled as of the question date. @k = top k distinct sessions.", ""]
        lines += _table(["pipeline", *LME_METRICS, "tokens@10", "p50 ms", "p95 ms"],
                        [[p, *[r[m] for m in LME_METRICS], r["tokens@10"], r["recall_p50_ms"], r["recall_p95_ms"]]
                         for p, r in res.items()])
        lines += ["", f"Ingest: {any_p['ingest_turns_per_s']:.1f} turns/s through the write track.", ""]
        full = res.get("full") or any_p
        lines += [f"By question type ({'full' if 'full' in res else next(iter(res))}):", ""]
        lines += _table(["type", "n", *LME_METRICS],
                        [[ty, row["questions"], *[row[m] for m in LME_METRICS]] for ty, row in full["by_type"].items()])
        lines += ["", "Published, with their conditions:", ""]
        lines += _table(["system", "conditions", "numbers"],
                        [[s, c, ", ".join(f"{k} {v}" for k, v in nums.items())] for s, c, nums in PUBLISHED_LME])
        lines.append("")
        if "lme" in images:
            lines += [f"![LongMemEval recall@k]({images['lme'].relative_to(base)})", ""]
    if "locomo" in runs:
        res = runs["locomo"]
        any_p = next(iter(res.values()))
        lines += ["## LoCoMo (evidence-turn coverage)", "",
                  f"`{runs.get('locomo_file')}`: one vault per conversation, sessions at their dates; "
                  f"{any_p['questions']} questions with evidence outside category 5. recall@k = fraction of a "
                  "question's evidence turns covered by the top-k memories (provenance or contained text).", ""]
        lines += _table(["pipeline", *LOCOMO_METRICS, "tokens@10", "p50 ms", "p95 ms"],
                        [[p, *[r[m] for m in LOCOMO_METRICS], r["tokens@10"], r["recall_p50_ms"],
                          r["recall_p95_ms"]] for p, r in res.items()])
        full = res.get("full") or any_p
        lines += ["", f"By category ({'full' if 'full' in res else next(iter(res))}):", ""]
        lines += _table(["category", "n", *LOCOMO_METRICS],
                        [[f"{c} {row['name']}", row["questions"], *[row[m] for m in LOCOMO_METRICS]]
                         for c, row in full["by_category"].items()])
        lines += ["", "Published, with their conditions:", ""]
        lines += _table(["system", "conditions", "numbers"],
                        [[s, c, ", ".join(f"{k} {v}" for k, v in nums.items())] for s, c, nums in PUBLISHED_LOCOMO])
        lines.append("")
        if "locomo" in images:
            lines += [f"![LoCoMo coverage@k]({images['locomo'].relative_to(base)})", ""]
    lines += ["## Latency", ""]
    rows = []
    if "longmemeval" in runs:
        rows += [[f"LongMemEval recall, {p}", "~500-1000 blocks per vault", r["recall_p50_ms"], r["recall_p95_ms"]]
                 for p, r in runs["longmemeval"].items()]
    if "locomo" in runs:
        rows += [[f"LoCoMo recall, {p}", "~600-800 blocks per vault", r["recall_p50_ms"], r["recall_p95_ms"]]
                 for p, r in runs["locomo"].items()]
    for lat in runs.get("latency") or []:
        n = lat.get("memories")
        rows.append([f"latency bench, fast", f"{n} memories", lat.get("fast_p50_ms"), lat.get("fast_p95_ms")])
        rows.append([f"latency bench, slow", f"{n} memories", lat.get("slow_p50_ms"), lat.get("slow_p95_ms")])
    lines += _table(["what", "size", "p50 ms", "p95 ms"], rows)
    lines += ["", "Published, with their conditions:", ""]
    lines += _table(["system", "conditions", "p50 / p95"], [list(r) for r in PUBLISHED_LATENCY])
    lines.append("")
    if "latency" in images:
        lines += [f"![latency against N]({images['latency'].relative_to(base)})", ""]
    for name, title in (("ingest", "Ingest"), ("guard", "Injection guard"), ("embed", "Embedders")):
        if name not in runs and name not in runs["notes"]:
            continue
        lines += [f"## {title}", ""]
        if runs["notes"].get(name):
            lines += [f"Note: {runs['notes'][name]}.", ""]
        if runs.get(name):
            lines += ["```json", json.dumps(runs[name], indent=1, default=str)[:6000], "```", ""]
        if runs["outputs"].get(name):
            lines += ["```", runs["outputs"][name].strip()[:6000], "```", ""]
    for key, note in runs["notes"].items():
        if key.startswith("latency"):
            lines += [f"Note ({key}): {note}.", ""]
    return "\n".join(lines).rstrip() + "\n"


def _cpus() -> int:
    import os

    return os.cpu_count() or 0
