"""The validation protocol (issue 21): numbers that predict held-out ones.

A benchmark's questions fall into folds: LoCoMo one fold per conversation (leave-one-conversation-out), LongMemEval
a seeded split of its questions, stratified by type. ``fold_spread`` gives a metric per fold and its spread
(min / mean / max), overall and per category. ``cross_validate`` is how any tuned number is chosen: given a grid
of candidate settings and every question's score under each, it picks the best setting on the other folds and
reports it on the held-out one, next to the in-sample number (the setting that is best on all the data, scored on
all of it). A lever is adopted only when its cross-validated number holds up (docs/read-track-log.md).

Read-side settings are ``ReadConfig`` variants written as ``section.field=v1,v2,...`` (``scoring.window_w=0,0.5``,
``cohesion.weight=0,0.1``, ``search.dense_w=0.5,1``, ``candidates=30,50``); ``read_settings`` builds them.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from app.bench.metrics import mean

Detail = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Fold:
    name: str
    test: frozenset[Hashable]  # the groups (conversation ids, question ids) held out in this fold


def group_folds(groups: Iterable[Hashable], prefix: str = "") -> list[Fold]:
    """One fold per group, in first-seen order (leave-one-group-out)."""
    return [Fold(f"{prefix}{g}", frozenset([g])) for g in dict.fromkeys(groups)]


def seeded_folds(items: Sequence[tuple[Hashable, Hashable]], k: int, seed: int = 0) -> list[Fold]:
    """``k`` folds of ``(id, stratum)`` items: each stratum shuffled with ``seed`` and dealt round-robin, so every
    fold holds about the same share of every stratum (LongMemEval: of every question type)."""
    if k < 2:
        raise ValueError(f"--folds needs at least 2 folds, got {k}")
    by_stratum: dict[Hashable, list[Hashable]] = defaultdict(list)
    for item_id, stratum in items:
        by_stratum[stratum].append(item_id)
    rng = random.Random(seed)
    members: list[set[Hashable]] = [set() for _ in range(k)]
    offset = 0
    for stratum in sorted(by_stratum, key=str):
        ids = sorted(by_stratum[stratum], key=str)
        rng.shuffle(ids)
        for i, item_id in enumerate(ids):
            members[(offset + i) % k].add(item_id)
        offset += len(ids)  # the next stratum starts where this one stopped: folds stay balanced in size
    return [Fold(f"fold {i + 1}/{k}", frozenset(m)) for i, m in enumerate(members)]


def _in(fold: Fold, key: Callable[[Detail], Hashable], details: Iterable[Detail], *, test: bool) -> list[Detail]:
    return [d for d in details if (key(d) in fold.test) == test]


def fold_spread(details: Sequence[Detail], folds: Sequence[Fold], key: Callable[[Detail], Hashable],
                metrics: Sequence[str], *, category: Callable[[Detail], str] | None = None,
                scored: Callable[[Detail], bool] = lambda d: True) -> dict[str, Any]:
    """Each metric per fold (its held-out questions) and the spread across folds, overall and per category."""
    rows = []
    for fold in folds:
        held = _in(fold, key, details, test=True)
        counted = [d for d in held if scored(d)]
        row: dict[str, Any] = {"fold": fold.name, "questions": len(counted),
                               **{m: round(mean(d[m] for d in counted), 4) for m in metrics}}
        if category is not None:
            cats: dict[str, list[Detail]] = defaultdict(list)
            for d in held:
                cats[category(d)].append(d)
            row["by_category"] = {c: {"questions": len(ds), **{m: round(mean(d[m] for d in ds), 4) for m in metrics}}
                                  for c, ds in sorted(cats.items())}
        rows.append(row)
    out: dict[str, Any] = {"folds": rows, "spread": {m: spread(r[m] for r in rows) for m in metrics}}
    if category is not None:
        names = sorted({c for r in rows for c in r["by_category"]})
        out["spread_by_category"] = {
            c: {m: spread(r["by_category"][c][m] for r in rows if c in r["by_category"]) for m in metrics}
            for c in names}
    return out


def spread(values: Iterable[float]) -> dict[str, float]:
    vals = list(values)
    if not vals:
        return {"min": 0.0, "mean": 0.0, "max": 0.0}
    return {"min": round(min(vals), 4), "mean": round(sum(vals) / len(vals), 4), "max": round(max(vals), 4)}


def cross_validate(scores: Mapping[str, Sequence[Detail]], folds: Sequence[Fold], key: Callable[[Detail], Hashable],
                   objective: Callable[[Sequence[Detail]], float]) -> dict[str, Any]:
    """Choose a setting on the training folds, report it on the held-out fold.

    ``scores`` maps each candidate setting's name to every question's detail under it (the same questions for
    every setting); ``objective`` turns a list of details into the number to maximise (ties: the first setting
    in ``scores``' order, so put the current default first). Per fold: the setting chosen on the other folds,
    its training and held-out numbers, and the held-out fold's own best (what tuning on it would have claimed).
    Overall: ``cross_validated`` pools every fold's held-out questions under the setting chosen without them;
    ``in_sample`` is the best setting on all questions, scored on all of them."""
    names = list(scores)
    if not names:
        raise ValueError("no candidate settings")
    per_fold = []
    pooled: list[Detail] = []
    for fold in folds:
        train = {n: objective(_in(fold, key, scores[n], test=False)) for n in names}
        test = {n: objective(_in(fold, key, scores[n], test=True)) for n in names}
        chosen = max(names, key=lambda n: (train[n], -names.index(n)))
        best_here = max(names, key=lambda n: (test[n], -names.index(n)))
        pooled += _in(fold, key, scores[chosen], test=True)
        per_fold.append({"fold": fold.name, "chosen": chosen, "train": round(train[chosen], 4),
                         "test": round(test[chosen], 4), "test_best": best_here,
                         "test_best_score": round(test[best_here], 4),
                         "test_by_setting": {n: round(v, 4) for n, v in test.items()}})
    overall = {n: objective(scores[n]) for n in names}
    best = max(names, key=lambda n: (overall[n], -names.index(n)))
    return {"settings": names, "folds": per_fold,
            "cross_validated": round(objective(pooled), 4),
            "cross_validated_spread": spread(f["test"] for f in per_fold),
            "in_sample": round(overall[best], 4), "in_sample_setting": best,
            "overall_by_setting": {n: round(v, 4) for n, v in overall.items()}}


# --- read-side settings ---------------------------------------------------------------------------------------

def _value(text: str, like: Any) -> Any:
    if isinstance(like, bool):
        if text.lower() not in ("true", "false", "1", "0", "on", "off"):
            raise ValueError(f"{text!r} is not a boolean")
        return text.lower() in ("true", "1", "on")
    if isinstance(like, int):
        return int(text)
    if isinstance(like, float) or like is None:
        return float(text)
    return type(like)(text)


def tune_grid(spec: str | None, command: str) -> dict[str, Any] | None:
    """``--tune``'s grid (:func:`read_settings`), None without one; a malformed spec ends ``command`` with why."""
    if not spec:
        return None
    try:
        return read_settings(spec)
    except ValueError as exc:
        raise SystemExit(f"{command}: {exc}") from exc


def read_settings(spec: str) -> dict[str, Any]:
    """``section.field=v1,v2,...`` (or ``field=...`` of ReadConfig itself; ``scoring.X`` is the per-intent
    ScoringConfig's field X, set for every intent) -> ``{"section.field=v": ReadConfig}`` in the order given.
    Several levers joined by ``;`` give every combination (the first of each first), named ``a=1;b=2``."""
    from app.read.config import ReadConfig

    out: dict[str, Any] = {"": ReadConfig()}
    for part in (p.strip() for p in spec.split(";") if p.strip()):
        out = {f"{name};{sub}" if name else sub: cfg
               for name, base in out.items() for sub, cfg in _lever_settings(part, base).items()}
    if not out or "" in out:
        raise ValueError(f"--tune {spec!r}: no values")
    return out


def _lever_settings(spec: str, base: Any) -> dict[str, Any]:
    from app.read.config import ScoringConfig

    lever, _, values = spec.partition("=")
    lever = lever.strip()
    if not values:
        raise ValueError(f"--tune {spec!r}: write section.field=v1,v2,...")
    section, _, name = lever.rpartition(".")
    out: dict[str, Any] = {}
    for raw in (v.strip() for v in values.split(",") if v.strip()):
        if section == "scoring":
            if name not in {f.name for f in fields(ScoringConfig)}:
                raise ValueError(f"--tune: ScoringConfig has no field {name!r}")
            value = _value(raw, getattr(ScoringConfig(), name))
            cfg = replace(base, scoring_overrides=(*base.scoring_overrides, (name, value)))
        elif section:
            part = getattr(base, section, None)
            if part is None or name not in {f.name for f in fields(part)}:
                raise ValueError(f"--tune: ReadConfig has no {lever!r}")
            value = _value(raw, getattr(part, name))
            cfg = replace(base, **{section: replace(part, **{name: value})})
        else:
            if name not in {f.name for f in fields(base)}:
                raise ValueError(f"--tune: ReadConfig has no field {name!r}")
            value = _value(raw, getattr(base, name))
            cfg = replace(base, **{name: value})
        out[f"{lever}={raw}"] = cfg
    if not out:
        raise ValueError(f"--tune {spec!r}: no values")
    return out


def format_spread(result: Mapping[str, Any], metrics: Sequence[str], title: str, primary: str,
                  names: Mapping[str, str] | None = None) -> str:
    """The per-fold table: each fold's metrics, then min / mean / max; then per category, ``primary`` in each
    fold and its spread."""
    rows = result["folds"]
    lines = [title, f"{'fold':<22}{'n':>5}" + "".join(f"{m:>15}" for m in metrics)]
    for r in rows:
        lines.append(f"{r['fold']:<22}{r['questions']:>5}" + "".join(f"{r[m]:>15.3f}" for m in metrics))
    for stat in ("min", "mean", "max"):
        lines.append(f"{stat:<22}{'':>5}" + "".join(f"{result['spread'][m][stat]:>15.3f}" for m in metrics))
    if result.get("spread_by_category"):
        lines.append(f"{primary} by category{'':<6}" + "".join(f"{r['fold'][-14:]:>15}" for r in rows)
                     + f"{'min':>8}{'mean':>8}{'max':>8}")
        for c, by_metric in result["spread_by_category"].items():
            cells = "".join(f"{r['by_category'][c][primary]:>15.3f}" if c in r["by_category"] else f"{'-':>15}"
                            for r in rows)
            sp = by_metric[primary]
            lines.append(f"  {(names or {}).get(c, c):<25}{cells}{sp['min']:>8.3f}{sp['mean']:>8.3f}{sp['max']:>8.3f}")
    return "\n".join(lines)


def format_setting(name: str, rows: Sequence[Mapping[str, Any]],
                   columns: Sequence[tuple[str, Callable[[Mapping[str, Any]], float]]]) -> str:
    """One candidate setting of ``--tune``: each column's value in every fold (``rows``: fold_spread's folds)."""
    return f"  {name:<36}" + "  ".join(f"{label} per fold " + " ".join(f"{value(r):.3f}" for r in rows)
                                      for label, value in columns)


def format_cv(cv: Mapping[str, Any], metric: str) -> str:
    lines = [f"cross-validation of {', '.join(cv['settings'])} on {metric}: chosen on the other folds, scored "
             "on the held-out one"]
    for f in cv["folds"]:
        lines.append(f"  {f['fold']:<20} chosen {f['chosen']:<34} train {f['train']:.3f}  held-out {f['test']:.3f}"
                     f"  (held-out best: {f['test_best']} {f['test_best_score']:.3f})")
    s = cv["cross_validated_spread"]
    lines.append(f"  cross-validated {cv['cross_validated']:.3f} (folds {s['min']:.3f} / {s['mean']:.3f} / "
                 f"{s['max']:.3f}) · in-sample {cv['in_sample']:.3f} ({cv['in_sample_setting']})")
    return "\n".join(lines)
