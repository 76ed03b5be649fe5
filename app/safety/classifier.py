"""A small learned detector next to the rules: logistic regression over hashed character n-grams (numpy only).

Rules name mechanisms; some attacks have no mechanism a regex can name without also naming ordinary chat (a
role-play set-up, a "contextual hijack" with no marker). The classifier scores those. It is deliberately weak in
the verdict: a probability of at least ``threshold_high`` is one ``high`` hit (``ml.injection_lr``), a probability
of at least ``threshold_medium`` is a ``medium`` hit that blocks only together with a rule cue. Its negatives are
English chat, so on text that is not English (``english_like``) it never exceeds ``medium``. The thresholds and
the weights ship together in ``app/safety/_clf_weights.py`` (int8, zlib, base64: no data files to package, no
download at run time) and are produced by ``python -m app.safety.train_classifier`` (see there for the data and
for the source-grouped cross-validation that estimates how it does on unseen data).

Features: the folded, lower-cased text (first ``MAXLEN`` characters, whitespace collapsed), character n-grams of
``NGRAMS`` lengths hashed into ``DIM`` buckets, sublinear term frequency, L2-normalised.
"""

from __future__ import annotations

import base64
import re
import zlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from app.safety.textfold import fold

DIM = 1 << 16
NGRAMS = (1, 2, 3, 4)
MAXLEN = 600
_MULT = np.uint64(0x9E3779B97F4A7C15)
_BASE = np.uint64(1000003)
_MASK = np.uint64(DIM - 1)


def featurize(text: str) -> tuple[np.ndarray, np.ndarray]:
    """(bucket indices, values) of one text; both 1-D, indices unique."""
    t = " ".join(fold(text[: MAXLEN * 2]).text.lower().split())[:MAXLEN]
    codes = np.frombuffer(f" {t} ".encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    n_codes = len(codes)
    parts = []
    for n in NGRAMS:
        if n_codes < n:
            break
        h = np.full(n_codes - n + 1, np.uint64(n * 0x51ED27), dtype=np.uint64)
        for i in range(n):
            h = h * _BASE + codes[i : n_codes - n + 1 + i]
        h ^= h >> np.uint64(31)
        h *= _MULT
        h ^= h >> np.uint64(29)
        parts.append(h & _MASK)
    idx, counts = np.unique(np.concatenate(parts), return_counts=True)
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

    # ---- (de)serialisation: int8 weights with one scale, zlib, base64 ---------------------------------------
    def dumps(self) -> str:
        scale = float(np.abs(self.weights).max()) / 127.0 or 1.0
        q = np.clip(np.rint(self.weights / scale), -127, 127).astype(np.int8)
        blob = base64.b64encode(zlib.compress(q.tobytes(), 9)).decode("ascii")
        lines = [blob[i : i + 100] for i in range(0, len(blob), 100)]
        body = "\n".join(f'    "{line}"' for line in lines)
        return (
            '"""Learned weights of ``app.safety.classifier``.\n\n'
            'Generated by ``python -m app.safety.train_classifier``; do not edit.\n"""\n\n'
            f"DIM = {DIM}\nNGRAMS = {NGRAMS!r}\nMAXLEN = {MAXLEN}\nSCALE = {float(scale)!r}\n"
            f"BIAS = {float(self.bias)!r}\nTHRESHOLD_HIGH = {float(self.threshold_high)!r}\n"
            f"THRESHOLD_MEDIUM = {float(self.threshold_medium)!r}\n"
            f"TRAINED_ON = {self.trained_on!r}\nWEIGHTS_INT8_ZLIB_B64 = (\n{body}\n)\n"
        )


@lru_cache(maxsize=1)
def load() -> InjectionClassifier:
    from app.safety import _clf_weights as w

    if (w.DIM, tuple(w.NGRAMS), w.MAXLEN) != (DIM, NGRAMS, MAXLEN):
        raise RuntimeError("app/safety/_clf_weights.py was trained with other features; retrain the classifier")
    q = np.frombuffer(zlib.decompress(base64.b64decode("".join(w.WEIGHTS_INT8_ZLIB_B64))), dtype=np.int8)
    return InjectionClassifier(
        weights=q.astype(np.float32) * np.float32(w.SCALE),
        bias=float(w.BIAS),
        threshold_high=float(w.THRESHOLD_HIGH),
        threshold_medium=float(w.THRESHOLD_MEDIUM),
        trained_on=w.TRAINED_ON,
    )
