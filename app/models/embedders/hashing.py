"""``hash``: a deterministic feature-hashing embedder, for fast unit tests only.

NOT SEMANTIC: two texts are close only when they share content words (stemmed; stopwords ignored), word bigrams
or Chinese bigrams. It needs no
weights and no imports beyond numpy, and the same text always gives the same vector on every machine.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

from app.models.base import Embedder
from app.models.tasks.text import CJK_RE, EN_STOPWORDS, cjk_bigrams, latin_words, stem


class HashEmbedder(Embedder):
    batch_size = 256
    instant = True  # no model: hashing

    def __init__(self, dim: int = 256) -> None:
        if dim < 8:
            raise ValueError("hash embedder dim must be >= 8")
        self.dim = dim
        self.name = f"hash:v1-{dim}"

    def _features(self, text: str) -> list[tuple[str, float]]:
        words = [stem(w) for w in latin_words(text) if w not in EN_STOPWORDS]
        feats = [(f"w:{w}", 1.0) for w in words]
        feats += [(f"b:{a}_{b}", 0.5) for a, b in zip(words, words[1:], strict=False)]
        feats += [(f"z:{g}", 1.0) for g in cjk_bigrams(text)]
        feats += [(f"c:{c}", 0.3) for c in CJK_RE.findall(text)]
        return feats

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            counts: dict[str, float] = {}
            for f, w in self._features(text):
                counts[f] = counts.get(f, 0.0) + w
            for f, w in counts.items():
                h = hashlib.blake2b(f.encode(), digest_size=8).digest()
                idx = int.from_bytes(h[:4], "little") % self.dim
                sign = 1.0 if h[4] & 1 else -1.0
                out[i, idx] += sign * (1.0 + math.log(w)) if w >= 1 else sign * w
            if not counts:  # empty text: a fixed unit vector rather than zeros
                out[i, 0] = 1.0
        return out
