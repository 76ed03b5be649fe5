"""``memvault bench guard``: how well the write gates stop injection and how often they stop ordinary turns.

    memvault bench guard --attacks injection_attacks_dev.jsonl --benign injection_hard_benign_dev.jsonl \\
        --chat locomo_dev.json --chat longmemeval_s_dev.json.gz [--cv K] [--embed-cache FILE] [--json out.json]

Two estimates, side by side:

* **in-sample**: every text goes through ``SafetyGates`` (G1 NoiseFilter -> G2 InjectionGuard -> PoisoningDetector)
  with the shipped rules and models, evaluated without short-circuit so both halves are measured. An attack counts
  as **blocked** when G2 rejects it (the noise gate's drops are reported apart: a dropped attack is not stored
  either, but it is not a security catch); false positives count G2 rejections only. Each text's USE vector is
  computed first, as the write track does for every item, and handed to the gates; the guard's (G2's) time per
  text is what it adds (rules, decoders, n-grams, the sentences it embeds itself), as wall time and as the thread's
  CPU time (on a shared machine the wall time includes waiting for a core); G1's CPU time and the cost of
  embedding a turn alone are printed next to it;
* **grouped K-fold cross-validation** (``--cv K``, default 5; ``0``: none), ``app.bench.guard_cv``: folds by data
  set, every learned part fit on the training folds only; one column per configuration (rules alone, + n-grams,
  + semantic detector, all), so the table shows what each mechanism adds on data sets it never saw.

Rates per family and per language (attacks of family ``other``, mostly factual corruption with no instruction, are
reported, not scored). Chat files are LoCoMo (a list of conversations with ``conversation.session_N`` turns) or
LongMemEval (gzip or plain JSON list; ``haystack_sessions`` of ``{role, content}`` turns), told apart by content;
all turns are used, identical texts once.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from app.errors import ConfigError


def add_parser(bench_sub: argparse._SubParsersAction) -> None:
    p = bench_sub.add_parser("guard", help="write-gate injection benchmark: block rate per family, false positives")
    p.add_argument("--attacks", required=True, type=Path, help="JSONL: text, family, source, lang")
    p.add_argument("--benign", required=True, type=Path, help="JSONL of hard benign texts")
    p.add_argument("--chat", action="extend", nargs="+", type=Path, default=[],
                   help="LoCoMo or LongMemEval file(s); every turn is an ordinary chat text")
    p.add_argument("--json", type=Path, default=None, help="write the metrics to this file")
    p.add_argument("--limit", type=int, default=None, help="use at most N texts per input (quick runs)")
    p.add_argument("--examples", type=int, default=5, help="misses / false positives to print per group")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--cv", type=int, nargs="?", const=5, default=5, metavar="K",
                   help="grouped K-fold cross-validation by data set (default 5; 0: in-sample only)")
    p.add_argument("--embed-cache", type=Path, default=None,
                   help="keep the USE vectors in this .npz between runs (the ~30,000 chat turns take minutes)")
    p.set_defaults(func=run)


# ---- running -----------------------------------------------------------------------------------------------------
def _progress(total: int, enabled: bool):  # noqa: ANN202 - tqdm or a no-op
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="text", file=sys.stderr, dynamic_ncols=True, leave=False)


def run(args: argparse.Namespace) -> int:
    from app.safety import semantic
    from app.safety.ruleset import RULESET_VERSION
    from app.safety.training import EmbeddingCache, load_docs
    from app.safety import ruleset
    from app.write.gates.chain import ChainReport, SafetyGates

    if args.cv == 1 or args.cv < 0:
        raise ConfigError("--cv takes the number of folds (at least 2), or 0 for no cross-validation")
    docs = load_docs(args.attacks, args.benign, args.chat)  # + the authored negatives: training only
    if args.limit:
        kept: dict[str, int] = Counter()
        limited = []
        for d in docs:
            if kept[d.kind] < args.limit:
                kept[d.kind] += 1
                limited.append(d)
        docs = limited
    cache = EmbeddingCache(semantic.embed_batch, args.embed_cache)
    print(f"embedding {len(docs)} texts (the write track's own vectors; cached in {args.embed_cache})"
          if args.embed_cache else f"embedding {len(docs)} texts (the write track's own vectors)", file=sys.stderr)
    vectors = cache([d.text for d in docs])
    cache.save()

    gates = SafetyGates()
    timings: list[float] = []  # G2 (the injection guard and the poisoning detector: one ruleset verdict)
    cpu: list[float] = []  # the same, the thread's CPU time: the cost without the wait for a core on a shared machine
    noise_cpu: list[float] = []  # G1 (NoiseFilter), reported apart
    bar = _progress(sum(d.kind != "authored" for d in docs), not args.no_progress and sys.stderr.isatty())
    blocked: list[bool] = []
    fam_noise: Counter[str] = Counter()
    by_rule: Counter[str] = Counter()
    chat_noise: Counter[str] = Counter()
    examples: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for d, vec in zip(docs, vectors):
        if d.kind == "authored":
            blocked.append(False)  # written for training; never evaluated
            continue
        # The whole text's vector comes from the write track (it embeds every item); the guard's own cost is the
        # rules, the n-gram model, and the sentences it embeds itself.
        start, start_cpu = time.perf_counter(), time.thread_time()
        verdict = ruleset.judge(d.text, vec)
        injection, poisoning = gates.injection(d.text, verdict), gates.poisoning(d.text, verdict)
        timings.append(time.perf_counter() - start)
        cpu.append(time.thread_time() - start_cpu)
        start_cpu = time.thread_time()
        report = ChainReport(gates.noise(d.text), injection, poisoning)  # what gates.evaluate returns
        noise_cpu.append(time.thread_time() - start_cpu)
        if bar is not None:
            bar.update(1)
        hit = not report.g2.passed
        blocked.append(hit)
        if d.kind == "attack":
            fam_noise[d.family] += not report.noise.passed
            if hit:
                by_rule[report.g2.rule or "?"] += 1
            else:
                examples[f"missed [{d.family}]"].append(("", d.text))
        else:
            if d.kind == "chat" and not report.noise.passed:
                chat_noise[report.noise.rule or "?"] += 1
            if hit:
                examples[f"{d.kind} FP"].append((report.g2.rule or "?", d.text))
    if bar is not None:
        bar.close()
    cache.save()

    from app.bench.guard_cv import CONFIGS, cross_validate, summarize

    insample = summarize(docs, blocked)
    fam_total = Counter(d.family for d in docs if d.kind == "attack")
    n_benign = sum(d.kind == "benign" for d in docs)
    n_chat = sum(d.kind == "chat" for d in docs)
    metrics: dict[str, Any] = {
        **insample,
        "attacks": sum(fam_total.values()),
        "benign": n_benign,
        "chat_turns": n_chat,
        "ruleset_version": RULESET_VERSION,
        "noise_drop_rate_chat": round(sum(chat_noise.values()) / n_chat, 4) if n_chat else None,
        "noise_drops_chat_by_rule": dict(chat_noise.most_common()),
        "noise_dropped_attacks": {f: fam_noise[f] for f in sorted(fam_total)},
        "attacks_by_family": dict(sorted(fam_total.items())),
        "blocked_by_rule": dict(by_rule.most_common()),
        "ms_per_text": round(1000 * statistics.fmean(timings), 3) if timings else None,
        "ms_p50": round(1000 * statistics.median(timings), 3) if timings else None,
        "ms_p95": round(1000 * statistics.quantiles(timings, n=20)[-1], 3) if len(timings) >= 20 else None,
        "cpu_ms_p50": round(1000 * statistics.median(cpu), 3) if cpu else None,
        "cpu_ms_p95": round(1000 * statistics.quantiles(cpu, n=20)[-1], 3) if len(cpu) >= 20 else None,
        "noise_cpu_ms_p95": round(1000 * statistics.quantiles(noise_cpu, n=20)[-1], 3) if len(noise_cpu) >= 20 else None,
        "ms_embed_turn_p50": _embed_cost([d.text for d in docs if d.kind == "chat"]),
    }
    _print_table(metrics, fam_total, fam_noise, examples, args.examples)
    if args.cv:
        model = semantic.load()
        cv = cross_validate(docs, vectors, cache, args.cv, embedder=model.embedder if model else "use")
        cache.save()
        metrics["cv"] = {"folds": args.cv, **{c: summarize(docs, cv[c]) for c in CONFIGS}}
        _print_cv(metrics, args.cv)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(metrics, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


def _embed_cost(texts: list[str], n: int = 200) -> float | None:
    """p50 ms of embedding one chat turn alone (what the guard would pay if the write track's vector were not reused)."""
    from app.safety import semantic

    sample = texts[:: max(1, len(texts) // n)][:n]
    if not sample:
        return None
    semantic.embed_batch(sample[:1])
    took = []
    for t in sample:
        start = time.perf_counter()
        semantic.embed_batch([t])
        took.append(time.perf_counter() - start)
    return round(1000 * statistics.median(took), 3)


def _short(text: str, n: int = 110) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 3] + "..."


def _print_table(
    m: dict[str, Any],
    total: Counter[str],
    noise: Counter[str],
    examples: dict[str, list[tuple[str, str]]],
    n_examples: int,
) -> None:
    print(f"memvault bench guard  (ruleset {m['ruleset_version']}): in-sample (the shipped rules and models)")
    print(f"{'family':26s} {'attacks':>8s} {'rate':>7s} {'noise':>6s}")
    for fam in sorted(total, key=lambda f: (f == "other", f)):
        note = "  (not scored)" if fam == "other" else ""
        print(f"{fam:26s} {total[fam]:8d} {m['by_family'][fam]:7.1%} {noise[fam]:6d}{note}")
    print(f"{'overall (without other)':26s} {'':8s} {m['block_rate']:7.1%}")
    print("by language: " + ", ".join(f"{k} {v:.1%}" for k, v in m["by_language"].items()))
    print()
    fp, cfp, nd = m["false_positive_rate"], m["chat_false_positive_rate"], m["noise_drop_rate_chat"]
    print(f"hard-benign wrongly blocked (G2): {m['benign_false_positives']}/{m['benign']} = {fp:.2%}"
          if fp is not None else "hard-benign: none")
    if cfp is not None:
        print(f"chat turns wrongly blocked (G2):  {m['chat_false_positives']}/{m['chat_turns']} = {cfp:.3%}")
        print(f"chat turns dropped by noise (G1): {nd:.2%}  {m['noise_drops_chat_by_rule']}")
    print(f"guard (G2) time per text (whole-text vector from the write track): mean {m['ms_per_text']} ms, "
          f"p50 {m['ms_p50']} ms, p95 {m['ms_p95']} ms (CPU time p50 {m['cpu_ms_p50']} ms, p95 {m['cpu_ms_p95']} ms); "
          f"embedding a chat turn alone: p50 {m['ms_embed_turn_p50']} ms; G1 noise filter CPU p95 "
          f"{m['noise_cpu_ms_p95']} ms")
    for label, rows in sorted(examples.items()):
        for rule, text in rows[:n_examples]:
            print(f"  {label}{' [' + rule + ']' if rule else ''} {_short(text)}")


def _print_cv(m: dict[str, Any], k: int) -> None:
    from app.bench.guard_cv import CONFIGS

    cv = m["cv"]
    print()
    print(f"grouped {k}-fold cross-validation (folds by data set; every learned part fit on the training folds only)")
    fams = [f for f in cv["all"]["by_family"] if f != "other"] + ["other"]
    head = f"{'':26s} {'in-sample':>10s}" + "".join(f" {c:>16s}" for c in CONFIGS)
    print(head)

    def row(label: str, insample: float | None, values: list[float | None], pct: str = ".1%") -> None:
        cells = "".join(f" {format(v, pct) if v is not None else '-':>16s}" for v in values)
        print(f"{label:26s} {format(insample, pct) if insample is not None else '-':>10s}{cells}")

    for fam in fams:
        row(fam, m["by_family"].get(fam), [cv[c]["by_family"].get(fam) for c in CONFIGS])
    row("all but other", m["block_rate"], [cv[c]["block_rate"] for c in CONFIGS])
    for lang in cv["all"]["by_language"]:
        row(f"  lang {lang}", m["by_language"].get(lang), [cv[c]["by_language"].get(lang) for c in CONFIGS])
    row("hard-benign blocked", m["false_positive_rate"], [cv[c]["false_positive_rate"] for c in CONFIGS], ".2%")
    row("chat turns blocked", m["chat_false_positive_rate"], [cv[c]["chat_false_positive_rate"] for c in CONFIGS],
        ".3%")
    goals = cv["all"]
    worst = min(((v, f) for f, v in goals["by_family"].items() if f != "other" and v is not None),
                default=(None, "-"))

    def pct(v: float | None, spec: str) -> str:
        return "-" if v is None else format(v, spec)

    print(f"goals (grouped CV, as shipped): all but other {pct(goals['block_rate'], '.1%')} (>= 95%), weakest "
          f"family {worst[1]} {pct(worst[0], '.1%')} (>= 90%), hard-benign {pct(goals['false_positive_rate'], '.2%')}"
          f" (<= 2%), chat {pct(goals['chat_false_positive_rate'], '.3%')} (<= 0.2%); guard p95 {m['ms_p95']} ms wall, "
          f"{m['cpu_ms_p95']} ms CPU (<= 2 ms)")
