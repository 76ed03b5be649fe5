"""Training data and fitting of the guard's learned parts, shared by ``memvault guard train`` and by the grouped
cross-validation of ``memvault bench guard --cv K``.

Data (``../shared/eval`` README: the dev split only, plus texts written for this project):

* positives: the attack texts, but family ``other`` (mostly factual corruption with no instruction, PoisonedRAG:
  not what an injection detector is for; still reported by the benchmark);
* negatives: the hard-benign texts, ordinary chat turns (LoCoMo, LongMemEval; a sample for training, every turn
  of a held-out fold for evaluation) and ``hard_negatives.txt`` (benign sentences with trigger words, in several
  languages, written for this project: always in training, never evaluated).

Learned parts: the character n-gram logistic regression (``app.safety.classifier``) and the logistic regression
over USE vectors (``app.safety.semantic``). Thresholds are fit too: from out-of-fold scores of the training data
(an inner grouped split), at a false-positive budget per kind of negative (``FP_BUDGET``), never from the texts they
are then evaluated on.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from app.safety.corpora import chat_turns_grouped, read_jsonl
from app.safety.grouping import assign_folds, source_group

if TYPE_CHECKING:
    from app.safety.classifier import InjectionClassifier
    from app.safety.semantic import SemanticDetector

AUTHORED = Path(__file__).with_name("hard_negatives.txt")
CHAT_TRAIN = 8000  # chat turns sampled into a fit (all of them are scored in evaluation)
L2 = 3e-4  # ridge on the semantic model's weights (loss is the class-balanced mean log-loss)
NEWTON_STEPS = 25
INNER_FOLDS = 3
# Out-of-fold false-positive budget each threshold is fit to: (chat, hard-benign) shares above the threshold.
FP_BUDGET = {"high": (0.0005, 0.005), "medium": (0.02, 0.10)}
THRESHOLD_FLOOR = {"high": 0.7, "medium": 0.5}
# Share of the loss each kind carries (attacks are balanced against all negatives together).
KIND_WEIGHT = {"attack": 1.0, "chat": 0.5, "benign": 0.3, "authored": 0.2}


@dataclass(frozen=True, slots=True)
class Doc:
    text: str
    y: int
    kind: str  # attack | benign | chat | authored
    family: str
    lang: str
    group: str


def load_docs(attacks: Path, benign: Path, chat: Sequence[Path], authored: Path | None = AUTHORED) -> list[Doc]:
    docs: list[Doc] = []
    for r in read_jsonl(attacks):
        docs.append(Doc(r["text"], 1, "attack", r.get("family", "other"), r.get("lang", "?"),
                        source_group(r.get("source", "?"))))
    for r in read_jsonl(benign):
        docs.append(Doc(r["text"], 0, "benign", "benign", r.get("lang", "?"), source_group(r.get("source", "?"))))
    seen: set[str] = set()
    for path in chat:
        for group, text in chat_turns_grouped(path):
            if text not in seen:
                seen.add(text)
                docs.append(Doc(text, 0, "chat", "chat", "en", f"chat:{path.name}:{group}"))
    if authored is not None and authored.exists():
        for line in authored.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                docs.append(Doc(line.strip(), 0, "authored", "authored", "?", "authored"))
    return docs


def trainable(d: Doc) -> bool:
    return d.kind != "attack" or d.family != "other"


def cv_folds(docs: Sequence[Doc], k: int) -> list[int]:
    """Fold of each doc (-1: authored negatives, always in training)."""
    idx = [i for i, d in enumerate(docs) if d.kind != "authored"]
    folds = assign_folds([docs[i].group for i in idx], [docs[i].kind for i in idx], k)
    out = [-1] * len(docs)
    for i, f in zip(idx, folds):
        out[i] = f
    return out


# ---- embeddings ----------------------------------------------------------------------------------------------------
class EmbeddingCache:
    """USE vectors by text, kept in an .npz file between runs (the benchmark embeds ~30,000 chat turns)."""

    def __init__(self, embed: Callable[[list[str]], np.ndarray], path: Path | None = None) -> None:
        self._embed = embed
        self.path = path
        self._rows: dict[str, np.ndarray] = {}
        if path is not None and path.exists():
            with np.load(path, allow_pickle=False) as z:
                self._rows = dict(zip(z["keys"].tolist(), z["vectors"]))
        self._dirty = False

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha1(text.encode("utf-8")).hexdigest()[:20]

    def __call__(self, texts: list[str]) -> np.ndarray:
        keys = [self.key(t) for t in texts]
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in self._rows))
        for start in range(0, len(missing), 256):
            chunk = missing[start : start + 256]
            for t, v in zip(chunk, self._embed(chunk)):
                self._rows[self.key(t)] = np.asarray(v, dtype=np.float32)
            self._dirty = True
        if not texts:
            return np.zeros((0, 512), dtype=np.float32)
        return np.stack([self._rows[k] for k in keys])

    def save(self) -> None:
        if self.path is None or not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = sorted(self._rows)
        with self.path.open("wb") as fh:
            np.savez(fh, keys=np.array(keys), vectors=np.stack([self._rows[k] for k in keys]).astype(np.float32))
        self._dirty = False


# ---- the semantic model ------------------------------------------------------------------------------------------
def _sample_weights(kinds: Sequence[str]) -> np.ndarray:
    kinds_arr = np.array(kinds)
    sw = np.zeros(len(kinds), dtype=np.float64)
    neg_total = sum(KIND_WEIGHT[k] for k in set(kinds) if k != "attack") or 1.0
    for k in set(kinds):
        m = kinds_arr == k
        share = 1.0 if k == "attack" else KIND_WEIGHT[k] / neg_total
        sw[m] = share / m.sum()
    return sw / sw.sum()


def fit_logistic(x: np.ndarray, y: np.ndarray, sw: np.ndarray, l2: float = L2) -> tuple[np.ndarray, float]:
    """Weighted, L2-regularised logistic regression by Newton's method (dense, a few hundred dimensions)."""
    n, d = x.shape
    xb = np.hstack([x.astype(np.float64), np.ones((n, 1))])
    w = np.zeros(d + 1)
    reg = np.full(d + 1, l2)
    reg[-1] = 0.0
    for _ in range(NEWTON_STEPS):
        z = np.clip(xb @ w, -30, 30)
        p = 1.0 / (1.0 + np.exp(-z))
        grad = xb.T @ (sw * (p - y)) + reg * w
        h = (xb * (sw * p * (1 - p))[:, None]).T @ xb + np.diag(reg + 1e-9)
        step = np.linalg.solve(h, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-6:
            break
    return w[:-1].astype(np.float32), float(w[-1])


def _fit_rows(docs: Sequence[Doc], idx: Sequence[int], seed: int) -> list[int]:
    rng = random.Random(seed)
    chat = [i for i in idx if docs[i].kind == "chat"]
    keep = set(rng.sample(chat, min(CHAT_TRAIN, len(chat))))
    return [i for i in idx if trainable(docs[i]) and (docs[i].kind != "chat" or i in keep)]


def _thresholds(probs: np.ndarray, kinds: Sequence[str]) -> dict[str, float]:
    kinds_arr = np.array(kinds)
    out = {}
    for level, (chat_fp, benign_fp) in FP_BUDGET.items():
        t = THRESHOLD_FLOOR[level]
        for kind, budget in (("chat", chat_fp), ("benign", benign_fp)):
            neg = probs[kinds_arr == kind]
            if len(neg):
                t = max(t, float(np.quantile(neg, 1.0 - budget)) + 1e-6)
        out[level] = min(t, 0.999)
    out["medium"] = min(out["medium"], out["high"])
    return out


def fit_semantic(docs: Sequence[Doc], vectors: np.ndarray, idx: Sequence[int], *, embedder: str,
                 seed: int = 0, inner: bool = True) -> SemanticDetector:
    """The semantic detector fit on ``docs[idx]``; thresholds from an inner grouped split of the same docs."""
    from app.safety.rule import FAMILIES
    from app.safety.semantic import SemanticDetector  # noqa: F811 - the runtime import of the TYPE_CHECKING name

    rows = _fit_rows(docs, idx, seed)
    x = vectors[rows]
    y = np.array([docs[i].y for i in rows], dtype=np.float64)
    w, b = fit_logistic(x, y, _sample_weights([docs[i].kind for i in rows]))

    def fit_fold(train: list[int], fold_seed: int) -> Callable[[int], float]:
        wi, bi = fit_logistic(*_xy_sw(docs, vectors, _fit_rows(docs, train, fold_seed)))
        return lambda i: 1.0 / (1.0 + np.exp(-(float(vectors[i] @ wi) + bi)))

    thresholds = (inner and _inner_thresholds(docs, idx, seed, fit_fold)) or {"high": 0.9, "medium": 0.7}
    fams = [f for f in FAMILIES if any(docs[i].kind == "attack" and docs[i].family == f for i in rows)]
    cents = []
    for f in fams:
        c = vectors[[i for i in rows if docs[i].kind == "attack" and docs[i].family == f]].mean(axis=0)
        cents.append(c / (np.linalg.norm(c) or 1.0))
    return SemanticDetector(weights=w, bias=b, threshold_high=thresholds["high"],
                            threshold_medium=thresholds["medium"], families=tuple(fams),
                            centroids=np.array(cents, dtype=np.float32).reshape(len(fams), vectors.shape[1]),
                            embedder=embedder, trained_on=_describe(docs, rows))


def _inner_thresholds(
    docs: Sequence[Doc], idx: Sequence[int], seed: int, fit_fold: Callable[[list[int], int], Callable[[int], float]],
) -> dict[str, float] | None:
    """Thresholds from out-of-fold scores of ``docs[idx]``'s negatives (an inner grouped split; ``fit_fold(train,
    seed)`` fits a model and returns its scorer). None when a split lacks attacks or benign texts (tiny inputs)."""
    folds = dict(zip(idx, cv_folds([docs[i] for i in idx], INNER_FOLDS)))
    for f in range(INNER_FOLDS):
        if len({docs[i].y for i in idx if folds[i] != f and trainable(docs[i])}) < 2:
            return None
    scored = [i for i in idx if docs[i].kind in ("chat", "benign")]
    oof = np.zeros(len(scored))
    for f in range(INNER_FOLDS):
        score = fit_fold([i for i in idx if folds[i] != f], seed + 1 + f)
        for j, i in enumerate(scored):
            if folds[i] == f:
                oof[j] = score(i)
    return _thresholds(oof, [docs[i].kind for i in scored])


def _xy_sw(docs: Sequence[Doc], vectors: np.ndarray, rows: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (vectors[rows], np.array([docs[i].y for i in rows], dtype=np.float64),
            _sample_weights([docs[i].kind for i in rows]))


def _describe(docs: Sequence[Doc], rows: Sequence[int]) -> str:
    kinds: dict[str, int] = {}
    for i in rows:
        kinds[docs[i].kind] = kinds.get(docs[i].kind, 0) + 1
    return json.dumps(kinds, sort_keys=True)


# ---- the n-gram model ----------------------------------------------------------------------------------------------
NGRAM_EPOCHS = 8
NGRAM_LR = 0.5
NGRAM_L2 = 1e-6


def fit_ngram(docs: Sequence[Doc], idx: Sequence[int], seed: int = 0, inner: bool = True) -> InjectionClassifier:
    """The n-gram model fit on ``docs[idx]``; thresholds from an inner grouped split, as for the semantic model."""
    from app.safety import classifier as clf

    rows = _fit_rows(docs, idx, seed)
    w, b = _ngram_weights(docs, rows, seed)

    def fit_fold(train: list[int], fold_seed: int) -> Callable[[int], float]:
        wi, bi = _ngram_weights(docs, _fit_rows(docs, train, fold_seed), seed)
        model = clf.InjectionClassifier(wi.astype(np.float32), bi, 1.0, 1.0, "inner")
        return lambda i: model.probability(docs[i].text)

    thresholds = (inner and _inner_thresholds(docs, idx, seed, fit_fold)) or {"high": 0.9, "medium": 0.6}
    return clf.InjectionClassifier(w.astype(np.float32), b, thresholds["high"], thresholds["medium"],
                                   trained_on=_describe(docs, rows))


def _ngram_weights(docs: Sequence[Doc], rows: Sequence[int], seed: int) -> tuple[np.ndarray, float]:
    """Class-balanced logistic regression over hashed character n-grams (AdaGrad, sparse updates)."""
    from app.safety import classifier as clf

    feats = [clf.featurize(docs[i].text) for i in rows]
    ys = np.array([docs[i].y for i in rows], dtype=np.float64)
    rng = random.Random(seed)
    w = np.zeros(clf.DIM)
    b = 0.0
    npos = float(ys.sum())
    nneg = len(ys) - npos
    cw = np.where(ys == 1, len(ys) / (2 * npos), len(ys) / (2 * nneg))
    acc = np.full(clf.DIM, 1e-8)
    acc_b = 1e-8
    order = list(range(len(ys)))
    for _ in range(NGRAM_EPOCHS):
        rng.shuffle(order)
        for start in range(0, len(order), 64):
            batch = order[start : start + 64]
            z = np.array([w[feats[i][0]] @ feats[i][1] for i in batch]) + b
            p = 1.0 / (1.0 + np.exp(-z))
            g = (p - ys[batch]) * cw[batch]
            ix = np.concatenate([feats[i][0] for i in batch])
            val = np.concatenate([feats[i][1] * gi for i, gi in zip(batch, g)])
            u, inv = np.unique(ix, return_inverse=True)
            grad = np.zeros(len(u))
            np.add.at(grad, inv, val)
            grad = grad / len(batch) + NGRAM_L2 * w[u]
            acc[u] += grad * grad
            w[u] -= NGRAM_LR * grad / np.sqrt(acc[u])
            gb = float(g.mean())
            acc_b += gb * gb
            b -= NGRAM_LR * gb / np.sqrt(acc_b)
    return w, b
