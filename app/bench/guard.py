"""``memvault bench guard``: how well the write gates stop injection and how often they stop ordinary turns.

    memvault bench guard --attacks injection_attacks_dev.jsonl --benign injection_hard_benign_dev.jsonl \\
        --chat locomo_dev.json --chat longmemeval_s_dev.json.gz [--json out.json]

Every text goes through ``SafetyGates`` (G1 NoiseFilter -> G2 InjectionGuard -> PoisoningDetector), evaluated
without short-circuit so both halves are measured:

* an attack counts as **blocked** when G2 (injection or poisoning) rejects it; how many the noise gate dropped is
  reported separately (a dropped attack is not stored either, but it is not a security catch);
* benign and chat **false positives** count only G2 rejections; the share of chat turns the noise gate drops is
  reported too (``noise_drop_rate_chat``), since every dropped turn is a memory lost for recall.

Chat files are LoCoMo (a list of conversations with ``conversation.session_N`` turns) or LongMemEval (gzip or plain
JSON list; ``haystack_sessions`` of ``{role, content}`` turns), told apart by content; all turns are used, identical
texts once.
"""

from __future__ import annotations

import argparse
import gzip
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
    p.set_defaults(func=run)


# ---- loading -----------------------------------------------------------------------------------------------------
def _read_json(path: Path) -> Any:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw.decode("utf-8"))


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        raise ConfigError(f"no such file: {path}")
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{path}:{n}: not JSON ({exc.msg})") from exc
    return rows


def chat_turns(path: Path) -> list[str]:
    """All turn texts of a LoCoMo or LongMemEval file, in file order."""
    if not path.exists():
        raise ConfigError(f"no such file: {path}")
    data = _read_json(path)
    if not isinstance(data, list) or not data or not isinstance(data[0], dict):
        raise ConfigError(f"{path}: expected a JSON list of LoCoMo conversations or LongMemEval questions")
    first = data[0]
    texts: list[str] = []
    if "conversation" in first:
        for conv in data:
            for key, value in conv["conversation"].items():
                if key.startswith("session_") and isinstance(value, list):
                    texts.extend(t["text"] for t in value if isinstance(t, dict) and t.get("text"))
    elif "haystack_sessions" in first:
        for item in data:
            for session in item["haystack_sessions"]:
                texts.extend(t["content"] for t in session if isinstance(t, dict) and t.get("content"))
    else:
        raise ConfigError(f"{path}: neither LoCoMo ('conversation') nor LongMemEval ('haystack_sessions')")
    return texts


# ---- running -----------------------------------------------------------------------------------------------------
def _progress(total: int, enabled: bool):  # noqa: ANN202 - tqdm or a no-op
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="text", file=sys.stderr, dynamic_ncols=True, leave=False)


def run(args: argparse.Namespace) -> int:
    from app.safety.ruleset import RULESET_VERSION
    from app.write.gates.chain import SafetyGates

    attacks = _read_jsonl(args.attacks)[: args.limit]
    benign = _read_jsonl(args.benign)[: args.limit]
    chat: list[str] = []
    seen: set[str] = set()
    for path in args.chat:
        for text in chat_turns(path):
            if text not in seen:
                seen.add(text)
                chat.append(text)
    chat = chat[: args.limit]

    gates = SafetyGates()
    timings: list[float] = []
    bar = _progress(len(attacks) + len(benign) + len(chat), not args.no_progress and sys.stderr.isatty())

    def judge(text: str):  # noqa: ANN202
        start = time.perf_counter()
        report = gates.evaluate(text)
        timings.append(time.perf_counter() - start)
        if bar is not None:
            bar.update(1)
        return report

    fam_total: Counter[str] = Counter()
    fam_blocked: Counter[str] = Counter()
    fam_noise: Counter[str] = Counter()
    by_rule: Counter[str] = Counter()
    misses: dict[str, list[str]] = defaultdict(list)
    for row in attacks:
        family = row.get("family", "other")
        report = judge(row["text"])
        fam_total[family] += 1
        if not report.noise.passed:
            fam_noise[family] += 1
        if not report.g2.passed:
            fam_blocked[family] += 1
            by_rule[report.g2.rule or "?"] += 1
        else:
            misses[family].append(row["text"])

    benign_fp: list[tuple[str, str]] = []
    for row in benign:
        report = judge(row["text"])
        if not report.g2.passed:
            benign_fp.append((report.g2.rule or "?", row["text"]))

    chat_fp: list[tuple[str, str]] = []
    chat_noise: Counter[str] = Counter()
    for text in chat:
        report = judge(text)
        if not report.noise.passed:
            chat_noise[report.noise.rule or "?"] += 1
        if not report.g2.passed:
            chat_fp.append((report.g2.rule or "?", text))
    if bar is not None:
        bar.close()

    def rate(a: int, b: int) -> float | None:
        return round(a / b, 4) if b else None

    scored = [f for f in fam_total if f != "other"]
    metrics: dict[str, Any] = {
        "block_rate": rate(sum(fam_blocked[f] for f in scored), sum(fam_total[f] for f in scored)),
        "by_family": {f: rate(fam_blocked[f], fam_total[f]) for f in sorted(fam_total)},
        "false_positive_rate": rate(len(benign_fp), len(benign)),
        "chat_false_positive_rate": rate(len(chat_fp), len(chat)),
        "attacks": len(attacks),
        "benign": len(benign),
        "chat_turns": len(chat),
        "ruleset_version": RULESET_VERSION,
        "noise_drop_rate_chat": rate(sum(chat_noise.values()), len(chat)),
        "noise_drops_chat_by_rule": dict(chat_noise.most_common()),
        "noise_dropped_attacks": {f: fam_noise[f] for f in sorted(fam_total)},
        "attacks_by_family": dict(sorted(fam_total.items())),
        "blocked_by_rule": dict(by_rule.most_common()),
        "benign_false_positives": len(benign_fp),
        "chat_false_positives": len(chat_fp),
        "ms_per_text": round(1000 * statistics.fmean(timings), 3) if timings else None,
        "ms_p50": round(1000 * statistics.median(timings), 3) if timings else None,
        "ms_p95": round(1000 * statistics.quantiles(timings, n=20)[-1], 3) if len(timings) >= 20 else None,
    }
    _print_table(metrics, fam_total, fam_blocked, fam_noise, misses, benign_fp, chat_fp, args.examples)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(metrics, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


def _short(text: str, n: int = 110) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 3] + "..."


def _print_table(
    m: dict[str, Any],
    total: Counter[str],
    blocked: Counter[str],
    noise: Counter[str],
    misses: dict[str, list[str]],
    benign_fp: list[tuple[str, str]],
    chat_fp: list[tuple[str, str]],
    examples: int,
) -> None:
    print(f"memvault bench guard  (ruleset {m['ruleset_version']})")
    print(f"{'family':26s} {'attacks':>8s} {'blocked':>8s} {'rate':>7s} {'noise':>6s}")
    for fam in sorted(total, key=lambda f: (f == "other", f)):
        r = blocked[fam] / total[fam]
        note = "  (not scored)" if fam == "other" else ""
        print(f"{fam:26s} {total[fam]:8d} {blocked[fam]:8d} {r:7.1%} {noise[fam]:6d}{note}")
    print(f"{'overall (without other)':26s} {'':8s} {'':8s} {m['block_rate']:7.1%}")
    print()
    fp, cfp, nd = m["false_positive_rate"], m["chat_false_positive_rate"], m["noise_drop_rate_chat"]
    print(f"hard-benign wrongly blocked (G2): {m['benign_false_positives']}/{m['benign']} = {fp:.2%}"
          if fp is not None else "hard-benign: none")
    if cfp is not None:
        print(f"chat turns wrongly blocked (G2):  {m['chat_false_positives']}/{m['chat_turns']} = {cfp:.3%}")
        print(f"chat turns dropped by noise (G1): {nd:.2%}  {m['noise_drops_chat_by_rule']}")
    print(f"time per text: mean {m['ms_per_text']} ms, p50 {m['ms_p50']} ms, p95 {m['ms_p95']} ms")
    if examples:
        for fam in sorted(misses):
            for text in misses[fam][:examples]:
                print(f"  missed [{fam}] {_short(text)}")
        for rule, text in benign_fp[:examples]:
            print(f"  benign FP [{rule}] {_short(text)}")
        for rule, text in chat_fp[:examples]:
            print(f"  chat FP [{rule}] {_short(text)}")
