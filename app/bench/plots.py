"""PNG plots for the benchmark report (matplotlib, Agg backend): recall@k per pipeline, latency against N."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.bench.metrics import mean, recall_all, recall_any


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def lme_curves(details: list[dict[str, Any]], max_k: int = 10) -> tuple[list[float], list[float]]:
    """recall_any@k and recall_all@k for k = 1..max_k from per-question rankings."""
    ks = range(1, max_k + 1)
    return ([mean(recall_any(d["ranked"], d["gold"], k) for d in details) for k in ks],
            [mean(recall_all(d["ranked"], d["gold"], k) for d in details) for k in ks])


def locomo_curve(details: list[dict[str, Any]]) -> list[float]:
    scored = [d for d in details if d["category"] != 5 and d.get("curve")]
    if not scored:
        return []
    return [mean(d["curve"][i] for d in scored) for i in range(len(scored[0]["curve"]))]


def write_plots(runs: dict[str, Any], out_dir: Path) -> dict[str, Path]:
    plt = _plt()
    out_dir.mkdir(parents=True, exist_ok=True)
    images: dict[str, Path] = {}
    if runs.get("longmemeval"):
        fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
        for p, r in runs["longmemeval"].items():
            any_k, all_k = lme_curves(r["details"])
            ks = list(range(1, len(any_k) + 1))
            axes[0].plot(ks, any_k, marker="o", label=p)
            axes[1].plot(ks, all_k, marker="o", label=p)
        axes[0].axhline(0.966, color="grey", linestyle=":", label="MemPalace 3.11 any@5 (0.966)")
        axes[1].scatter([5, 10], [0.706, 0.783], color="black", marker="x", label="paper, Stella M split")
        for ax, title in zip(axes, ("recall_any@k", "recall_all@k"), strict=True):
            ax.set_title(f"LongMemEval dev: session {title}")
            ax.set_xlabel("k (distinct sessions)")
            ax.set_ylim(0, 1.02)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        fig.tight_layout()
        images["lme"] = out_dir / "longmemeval_recall_at_k.png"
        fig.savefig(images["lme"], dpi=110)
        plt.close(fig)
    if runs.get("locomo"):
        fig, ax = plt.subplots(figsize=(6, 4))
        for p, r in runs["locomo"].items():
            curve = locomo_curve(r["details"])
            ax.plot(range(1, len(curve) + 1), curve, label=p)
        ax.scatter([5, 10, 25], [0.567, 0.662, 0.767], color="black", marker="x", label="paper, DRAGON")
        ax.set_title("LoCoMo dev: evidence coverage@k")
        ax.set_xlabel("k (memories)")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        images["locomo"] = out_dir / "locomo_coverage_at_k.png"
        fig.savefig(images["locomo"], dpi=110)
        plt.close(fig)
    points = sorted((lat for lat in runs.get("latency") or [] if lat.get("memories")),
                    key=lambda x: x["memories"])
    if points:
        fig, ax = plt.subplots(figsize=(6, 4))
        ns = [p["memories"] for p in points]
        for key, style in (("fast_p50_ms", "-o"), ("fast_p95_ms", "--o"), ("slow_p50_ms", "-s"),
                           ("slow_p95_ms", "--s")):
            ys = [p.get(key) for p in points]
            if any(y is not None for y in ys):
                ax.plot(ns, ys, style, label=key.replace("_ms", ""))
        ax.axhline(148, color="grey", linestyle=":", label="Mem0 p50 (paper)")
        ax.axhline(200, color="grey", linestyle="--", label="Mem0 p95 (paper)")
        ax.set_xscale("log")
        ax.set_xlabel("memories in the vault (N)")
        ax.set_ylabel("recall latency, ms")
        ax.set_title("Recall latency against N")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        images["latency"] = out_dir / "latency_vs_n.png"
        fig.savefig(images["latency"], dpi=110)
        plt.close(fig)
    return images
