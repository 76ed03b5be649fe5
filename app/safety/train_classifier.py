"""Train the learned injection detector and estimate how it generalises.

    python -m app.safety.train_classifier \\
        --attacks ../shared/eval/injection_attacks_dev.jsonl --benign ../shared/eval/injection_hard_benign_dev.jsonl \\
        --chat ../shared/eval/locomo_dev.json --chat ../shared/eval/longmemeval_s_dev.json.gz \\
        [--write app/safety/_clf_weights.py] [--cv grouped|random|none]

Positives: the attack texts (family ``other``, mostly factual corruption with no instruction, is left out: it is
not what this detector is for). Negatives: the hard-benign texts, ordinary chat turns (a random sample for
training; every held-out turn for evaluation) and ``hard_negatives.txt`` (benign sentences with trigger words,
written for this project; always in training, never evaluated).

Cross-validation, five folds:
* ``grouped``: folds by *source* (attack and benign texts by their ``source`` field, chat turns by blocks of one
  conversation), so every test fold holds data sets the model never saw: the pessimistic estimate;
* ``random``: folds by text, the same sources on both sides: closer to a held-out split of the same sources.
Each fold reports the full verdict (rules + classifier, as the ruleset combines them) on the held-out texts.
The rules themselves were written while looking at the development data, so their share is in-sample either way.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from app.safety import classifier as clf
from app.safety.rule import SEVERITY_WEIGHT, UNSAFE_THRESHOLD

CHAT_TRAIN = 12000
EPOCHS = 8
L2 = 1e-6
LR = 0.5


def _load(args: argparse.Namespace) -> list[dict]:
    from app.bench.guard import _read_jsonl, chat_turns

    docs: list[dict] = []
    for r in _read_jsonl(args.attacks):
        if r.get("family") == "other":
            continue
        docs.append({"text": r["text"], "y": 1, "kind": "attack", "family": r["family"],
                     "group": "A:" + r["source"].split(" + ")[0]})
    for r in _read_jsonl(args.benign):
        docs.append({"text": r["text"], "y": 0, "kind": "benign", "family": "benign", "group": "B:" + r["source"]})
    if args.extra_negatives:
        for line in args.extra_negatives.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                docs.append({"text": line.strip(), "y": 0, "kind": "extra", "family": "extra", "group": "N:authored"})
    seen: set[str] = set()
    for path in args.chat:
        for i, text in enumerate(chat_turns(path)):
            if text in seen:
                continue
            seen.add(text)
            docs.append({"text": text, "y": 0, "kind": "chat", "family": "chat", "group": f"C:{path.name}:{i // 200}"})
    return docs


def _rule_scores(docs: list[dict]) -> None:
    from app.safety import ruleset

    for d in docs:
        weights: dict[str, float] = {}
        for h in ruleset.scan_rules(d["text"]):
            weights[h.rule_id] = max(weights.get(h.rule_id, 0.0), SEVERITY_WEIGHT[h.severity])
        d["rule_score"] = sum(weights.values())


def train(feats: list[tuple[np.ndarray, np.ndarray]], ys: np.ndarray, seed: int = 0) -> tuple[np.ndarray, float]:
    """Class-balanced logistic regression, AdaGrad, sparse updates."""
    rng = random.Random(seed)
    w = np.zeros(clf.DIM)
    b = 0.0
    npos = float(ys.sum())
    nneg = len(ys) - npos
    cw = np.where(ys == 1, len(ys) / (2 * npos), len(ys) / (2 * nneg))
    acc = np.full(clf.DIM, 1e-8)
    acc_b = 1e-8
    order = list(range(len(ys)))
    for _ in range(EPOCHS):
        rng.shuffle(order)
        for start in range(0, len(order), 64):
            batch = order[start : start + 64]
            z = np.array([w[feats[i][0]] @ feats[i][1] for i in batch]) + b
            p = 1.0 / (1.0 + np.exp(-z))
            g = (p - ys[batch]) * cw[batch]
            idx = np.concatenate([feats[i][0] for i in batch])
            val = np.concatenate([feats[i][1] * gi for i, gi in zip(batch, g)])
            u, inv = np.unique(idx, return_inverse=True)
            grad = np.zeros(len(u))
            np.add.at(grad, inv, val)
            grad = grad / len(batch) + L2 * w[u]
            acc[u] += grad * grad
            w[u] -= LR * grad / np.sqrt(acc[u])
            gb = float(g.mean())
            acc_b += gb * gb
            b -= LR * gb / np.sqrt(acc_b)
    return w, b


def _fit(docs: list[dict], idx: list[int], seed: int) -> tuple[np.ndarray, float]:
    rng = random.Random(seed)
    chat = [i for i in idx if docs[i]["kind"] == "chat"]
    keep = set(rng.sample(chat, min(CHAT_TRAIN, len(chat))))
    train_ix = [i for i in idx if docs[i]["kind"] != "chat" or i in keep]
    feats = [clf.featurize(docs[i]["text"]) for i in train_ix]
    ys = np.array([docs[i]["y"] for i in train_ix], dtype=np.float64)
    return train(feats, ys, seed)


def _combined(text: str, rule_score: float, p: float, th_high: float, th_medium: float) -> bool:
    """The ruleset's own combination (``ruleset.ml_severity``) at the given thresholds."""
    from app.safety.ruleset import ml_severity

    model = clf.InjectionClassifier(np.zeros(1, dtype=np.float32), 0.0, th_high, th_medium, "cv")
    severity = ml_severity(text, p, model)
    extra = SEVERITY_WEIGHT[severity] if severity else 0.0
    return rule_score + extra >= UNSAFE_THRESHOLD


def report(docs: list[dict], probs: np.ndarray, th_high: float, th_medium: float, label: str) -> dict:
    fam = defaultdict(lambda: [0, 0])
    fp = Counter()
    n = Counter()
    for d, p in zip(docs, probs):
        if d["kind"] == "extra":
            continue
        blocked = _combined(d["text"], d["rule_score"], float(p), th_high, th_medium)
        if d["kind"] == "attack":
            fam[d["family"]][0] += blocked
            fam[d["family"]][1] += 1
        else:
            fp[d["kind"]] += blocked
            n[d["kind"]] += 1
    total = [sum(v[0] for v in fam.values()), sum(v[1] for v in fam.values())]
    out = {
        "label": label, "threshold_high": th_high, "threshold_medium": th_medium,
        "block_rate": round(total[0] / total[1], 4),
        "by_family": {k: round(v[0] / v[1], 4) for k, v in sorted(fam.items())},
        "false_positive_rate": round(fp["benign"] / max(n["benign"], 1), 4),
        "chat_false_positive_rate": round(fp["chat"] / max(n["chat"], 1), 5),
    }
    print(json.dumps(out))
    return out


def cross_validate(docs: list[dict], mode: str, k: int = 5, seed: int = 0) -> np.ndarray:
    rng = random.Random(seed)
    if mode == "grouped":
        fold_of: dict[str, int] = {}
        for prefix in "ABC":
            groups = sorted({d["group"] for d in docs if d["group"].startswith(prefix)})
            rng.shuffle(groups)
            fold_of.update({g: j % k for j, g in enumerate(groups)})
        folds = [fold_of.get(d["group"], -1) for d in docs]
    else:
        folds = [rng.randrange(k) for _ in docs]
    folds = [-1 if d["kind"] == "extra" else f for d, f in zip(docs, folds)]  # authored negatives: always train
    probs = np.zeros(len(docs))
    for f in range(k):
        tr = [i for i, x in enumerate(folds) if x != f]
        te = [i for i, x in enumerate(folds) if x == f]
        w, b = _fit(docs, tr, seed + f)
        fold_model = clf.InjectionClassifier(w.astype(np.float32), b, 1.0, 1.0, "cv")
        for i in te:
            probs[i] = fold_model.probability(docs[i]["text"])
        print(f"[{mode}] fold {f}: trained on {len(tr)}, scored {len(te)}", file=sys.stderr)
    return probs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m app.safety.train_classifier")
    ap.add_argument("--attacks", type=Path, required=True)
    ap.add_argument("--benign", type=Path, required=True)
    ap.add_argument("--chat", type=Path, action="append", default=[])
    ap.add_argument("--cv", choices=("grouped", "random", "both", "none"), default="both")
    ap.add_argument("--threshold-high", type=float, default=0.9)
    ap.add_argument("--threshold-medium", type=float, default=0.6)
    ap.add_argument("--extra-negatives", type=Path, default=Path(__file__).with_name("hard_negatives.txt"),
                    help="authored benign texts with trigger words, used for training only")
    ap.add_argument("--write", type=Path, default=None, help="write the weights module here")
    ap.add_argument("--report", type=Path, default=None, help="write the CV reports (JSON) here")
    args = ap.parse_args(argv)

    docs = _load(args)
    _rule_scores(docs)
    results = []
    no_clf = np.zeros(len(docs))
    results.append(report(docs, no_clf, 2.0, 2.0, "rules only (in-sample)"))
    modes = {"both": ("grouped", "random"), "none": ()}.get(args.cv, (args.cv,))
    for mode in modes:
        probs = cross_validate(docs, mode)
        for th_high, th_medium in ((0.8, 0.5), (0.9, 0.6), (0.9, 0.7), (0.95, 0.7), (0.95, 0.8)):
            results.append(report(docs, probs, th_high, th_medium, f"rules + classifier, {mode} 5-fold CV"))
    w, b = _fit(docs, list(range(len(docs))), 0)
    model = clf.InjectionClassifier(
        w.astype(np.float32), b, args.threshold_high, args.threshold_medium,
        trained_on=f"{len(docs)} texts: {args.attacks.name}, {args.benign.name}, "
        + ", ".join(p.name for p in args.chat),
    )
    if args.write:
        args.write.write_text(model.dumps(), encoding="utf-8")
        print(f"wrote {args.write}", file=sys.stderr)
        clf.load.cache_clear()
        model = clf.load()
    probs = np.array([model.probability(d["text"]) for d in docs])
    results.append(report(docs, probs, args.threshold_high, args.threshold_medium, "rules + classifier, in-sample"))
    if args.report:
        args.report.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
