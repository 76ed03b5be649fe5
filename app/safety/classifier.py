"""A small learned detector next to the rules: logistic regression over hashed character n-grams (numpy only).

Rules name mechanisms; some attacks have no mechanism a regex can name without also naming ordinary chat (a
role-play set-up, a "contextual hijack" with no marker). The classifier scores those. It is deliberately weak in
the verdict: a probability of at least ``threshold_high`` is one ``high`` hit (``ml.injection_lr``), a probability
of at least ``threshold_medium`` is a ``medium`` hit that blocks only together with a rule cue. Its negatives are
mostly English chat, so on text that is not English (``english_like``) it never exceeds ``medium``; nor on a text
that addresses no one (``app.safety.structure``). Both thresholds are fit on out-of-fold scores of the training
data at a false-positive budget (``app.safety.training.FP_BUDGET``). The thresholds and the weights ship together in ``app/safety/data/ngram_lr.npz`` (int8 weights and one scale; package data, no
download at run time), written by ``memvault guard train`` (``app.safety.training``: the data; ``memvault bench
guard --cv K``: the source-grouped cross-validation that estimates how it does on unseen data).

Features: the folded, lower-cased text (first ``MAXLEN`` characters, whitespace collapsed), character n-grams of
``NGRAMS`` lengths hashed into ``DIM`` buckets, sublinear term frequency, L2-normalised.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from app.safety.textfold import fold

DATA_FILE = Path(__file__).with_name("data") / "ngram_lr.npz"
DIM = 1 << 16
NGRAMS = (1, 2, 3, 4)
MAXLEN = 600
_MULT = np.uint64(0x9E3779B97F4A7C15)
_BASE = np.uint64(1000003)
_MASK = np.uint64(DIM - 1)
with np.errstate(over="ignore"):  # uint64 arithmetic wraps, as the hash means it to
    _SEED = {n: np.uint64(n * 0x51ED27) * _BASE ** np.uint64(n) for n in NGRAMS}  # seed_n * BASE^n


def featurize(text: str) -> tuple[np.ndarray, np.ndarray]:
    """(bucket indices, values) of one text; both 1-D, indices unique.

    The hash of an n-gram starting at j is seed_n * BASE^n + sum_i code[j+i] * BASE^(n-1-i) (mod 2^64), its
    polynomial part built from the (n-1)-grams' (one multiply-add per length, not n), all lengths mixed at once
    and counted by one sort: the same buckets and values as hashing each n-gram from its seed (a test keeps the
    two equal), in half the CPU (the read sanitizer scores each recalled text).
    """
    t = " ".join(fold(text[: MAXLEN * 2]).text.lower().split())[:MAXLEN]
    codes = np.frombuffer(f" {t} ".encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    parts = []
    poly = None
    for n in NGRAMS:
        if len(codes) < n:
            break
        poly = codes if poly is None else poly[:-1] * _BASE + codes[n - 1:]
        parts.append(poly + _SEED[n])
    h = np.concatenate(parts)
    h ^= h >> np.uint64(31)
    h *= _MULT
    h ^= h >> np.uint64(29)
    h &= _MASK
    h.sort()
    first = np.empty(len(h) + 1, dtype=bool)  # where each distinct bucket starts, and the end
    first[0] = first[-1] = True
    np.not_equal(h[1:], h[:-1], out=first[1:-1])
    starts = np.flatnonzero(first)
    idx, counts = h[starts[:-1]], np.diff(starts)
    val = 1.0 + np.log(counts)
    val /= np.sqrt(float((val * val).sum()))
    return idx.astype(np.int64), val.astype(np.float32)


# The training negatives are ordinary chat in English (LoCoMo, LongMemEval), so the model has learned "not
# English" as weak evidence of an attack. It is therefore trusted alone only on English text; elsewhere its
# probability can at most add a medium hit, and the per-language rules decide.
_NON_LATIN = re.compile(r"[\u0370-\u03ff\u0400-\u04ff\u0590-\u06ff\u0900-\u0dff\u0e00-\u0e7f\u1100-\u11ff"
                        r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_FOREIGN_WORDS = frozenset(
    """der die das und ist ich nicht sie wir ein eine mit auf für den dem des zu von bitte el la los las que y es
    por para una con del se lo como pero le les et est je vous nous une dans pour pas sur au aux ce qui il che di
    non per sono della questo não uma com os um para ele ela você""".split()
)
_ENGLISH_WORDS = frozenset(
    """the a an and or is are was were be to of in on at for with from by it this that you your i me my we our
    they he she not do does did have has had what how why when where which can could would should will if""".split()
)
_TOKENS = re.compile(r"[^\W\d_]+")
_DIACRITICS = frozenset("àâäáãåæçèéêëìíîïñòóôöõøœùúûüýÿßğışőű")


def english_like(text: str) -> bool:
    """Latin script and more English function words than those of the other languages in the attack corpora."""
    sample = text[: MAXLEN * 2]
    letters = sum(ch.isalpha() for ch in sample)
    if letters == 0 or len(_NON_LATIN.findall(sample)) > 0.1 * letters:
        return False
    words = [w.lower() for w in _TOKENS.findall(sample)]
    english = sum(w in _ENGLISH_WORDS for w in words)
    foreign = sum(w in _FOREIGN_WORDS for w in words)
    if english == foreign == 0:
        return not any(ch in _DIACRITICS for ch in sample.lower())
    return english >= foreign


@dataclass(frozen=True)
class InjectionClassifier:
    weights: np.ndarray
    bias: float
    threshold_high: float
    threshold_medium: float
    trained_on: str

    def probability(self, text: str) -> float:
        idx, val = featurize(text)
        z = float(self.weights[idx] @ val) + self.bias
        return 1.0 / (1.0 + np.exp(-z))

    # ---- the data file: int8 weights with one scale -----------------------------------------------------------
    def save(self, path: Path = DATA_FILE) -> None:
        scale = float(np.abs(self.weights).max()) / 127.0 or 1.0
        q = np.clip(np.rint(self.weights / scale), -127, 127).astype(np.int8)
        meta = {"dim": DIM, "ngrams": list(NGRAMS), "maxlen": MAXLEN, "scale": scale, "bias": float(self.bias),
                "threshold_high": float(self.threshold_high), "threshold_medium": float(self.threshold_medium),
                "trained_on": self.trained_on}
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as fh:
            np.savez_compressed(fh, weights_int8=q, meta=np.array(json.dumps(meta)))

    @classmethod
    def read(cls, path: Path) -> InjectionClassifier:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            q = z["weights_int8"]
        if (meta["dim"], tuple(meta["ngrams"]), meta["maxlen"]) != (DIM, NGRAMS, MAXLEN):
            raise RuntimeError(f"{path} was trained with other features; retrain with `memvault guard train`")
        return cls(weights=q.astype(np.float32) * np.float32(meta["scale"]), bias=float(meta["bias"]),
                   threshold_high=float(meta["threshold_high"]), threshold_medium=float(meta["threshold_medium"]),
                   trained_on=str(meta["trained_on"]))


@lru_cache(maxsize=1)
def load() -> InjectionClassifier:
    return InjectionClassifier.read(DATA_FILE)
