"""Grouped cross-validation of the guard (``memvault bench guard --cv K``): the honest estimate.

Folds are split by data set (``app.safety.grouping``: a source's texts, in every language and split, and the
``constructed:`` texts that wrap its payloads, are all on one side), and every learned part is fit on the training
folds only: the n-gram model's weights, the semantic model's weights, its thresholds (from an inner grouped split of
the training folds) and its family centroids. The hand-written rules are the same in every fold: they were written
while reading the whole dev split, so their share of a CV number is in-sample (the rule layer's row says how much
of each family the rules block alone).

Each held-out text is judged by the ruleset's own combination (``ruleset.with_ngram``, ``ruleset.with_semantic``)
in several configurations, so the table shows what each mechanism adds:

* ``rules``: the hand-written rules alone (no learned part);
* ``rules+ngram``: the guard as it was before the semantic detector (``before``);
* ``rules+sem(text)``: the semantic detector on the whole text's vector only;
* ``rules+sem``: the semantic detector with per-sentence scoring;
* ``all``: rules, n-grams and the semantic detector, as shipped.
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from app.errors import ConfigError
from app.safety.training import Doc, cv_folds, fit_ngram, fit_semantic, trainable

CONFIGS = ("rules", "rules+ngram", "rules+sem(text)", "rules+sem", "all")


def cross_validate(
    docs: Sequence[Doc],
    vectors: np.ndarray,
    embed: Callable[[list[str]], np.ndarray],
    k: int,
    embedder: str,
    log: Callable[[str], None] = lambda s: print(s, file=sys.stderr),
) -> dict[str, list[bool]]:
    """Blocked or not, per doc and configuration, every doc judged by models that never saw its data set."""
    from app.safety import ruleset

    folds = cv_folds(docs, k)
    rule_hits = [ruleset.scan_rules(d.text) for d in docs]
    out = {c: [False] * len(docs) for c in CONFIGS}
    for f in range(k):
        t0 = time.perf_counter()
        train = [i for i, x in enumerate(folds) if x != f]
        test = [i for i, x in enumerate(folds) if x == f]
        if len({docs[i].y for i in train if trainable(docs[i])}) < 2:
            raise ConfigError(f"fold {f + 1} of {k}: its training folds lack attacks or benign texts; "
                              "use fewer folds (--cv) or more data sets")
        ngram = fit_ngram(docs, train, seed=f)
        sem = fit_semantic(docs, vectors, train, embedder=embedder, seed=f)
        for i in test:
            text, rh = docs[i].text, rule_hits[i]
            with_ng = ruleset.with_ngram(text, rh, ngram)
            out["rules"][i] = ruleset.verdict_of(rh).unsafe
            out["rules+ngram"][i] = ruleset.verdict_of(with_ng).unsafe
            out["rules+sem(text)"][i] = ruleset.verdict_of(
                ruleset.with_semantic(text, rh, sem, vectors[i], embed, per_sentence=False)).unsafe
            out["rules+sem"][i] = ruleset.verdict_of(ruleset.with_semantic(text, rh, sem, vectors[i], embed)).unsafe
            out["all"][i] = ruleset.verdict_of(ruleset.with_semantic(text, with_ng, sem, vectors[i], embed)).unsafe
        log(f"[cv] fold {f + 1}/{k}: fit on {len(train)}, judged {len(test)} "
            f"(semantic thresholds {sem.threshold_high:.3f} / {sem.threshold_medium:.3f}) "
            f"in {time.perf_counter() - t0:.0f} s")
    return out


def summarize(docs: Sequence[Doc], blocked: Sequence[bool]) -> dict[str, Any]:
    """Block rates per family and language, false-positive rates, for one configuration."""
    fam: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    lang: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    neg: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for d, b in zip(docs, blocked):
        if d.kind == "attack":
            fam[d.family][0] += b
            fam[d.family][1] += 1
            if d.family != "other":
                lang[d.lang][0] += b
                lang[d.lang][1] += 1
        elif d.kind in ("benign", "chat"):
            neg[d.kind][0] += b
            neg[d.kind][1] += 1
    scored = [v for f, v in fam.items() if f != "other"]
    total = [sum(v[0] for v in scored), sum(v[1] for v in scored)]
    return {
        "block_rate": _rate(*total),
        "by_family": {f: _rate(*v) for f, v in sorted(fam.items())},
        "by_language": {lg: _rate(*v) for lg, v in sorted(lang.items(), key=lambda kv: -kv[1][1])},
        "false_positive_rate": _rate(*neg["benign"]),
        "chat_false_positive_rate": _rate(*neg["chat"]),
        "benign_false_positives": neg["benign"][0],
        "chat_false_positives": neg["chat"][0],
    }


def _rate(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None
