"""Text fingerprints for Dedup: a 64-bit SimHash of the normalized text and an exact-content hash.

SimHash over word tokens (Latin) and character bigrams (CJK), so near-identical texts differ by a few bits
whatever the language. Stored as a signed bigint (PostgreSQL has no unsigned 64-bit integer).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

import numpy as np

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_MASK = (1 << 64) - 1


def canonical(text: str) -> str:
    """Case-, width- and whitespace-insensitive form used for the exact hash."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(folded.split())


def features(text: str) -> list[str]:
    out: list[str] = []
    for tok in _TOKEN.findall(canonical(text)):
        if _CJK.match(tok):
            out.extend(tok[i:i + 2] for i in range(max(len(tok) - 1, 1)))
        else:
            out.append(tok)
    return out


def simhash(text: str) -> int:
    feats = features(text)
    if not feats:
        return 0
    digests = b"".join(hashlib.blake2b(f.encode(), digest_size=8).digest() for f in feats)
    bits = np.unpackbits(np.frombuffer(digests, dtype=np.uint8).reshape(-1, 8), axis=1)  # (n, 64), MSB first
    keep = bits.sum(axis=0) * 2 > len(feats)
    value = int.from_bytes(np.packbits(keep).tobytes(), "big")
    return value - (1 << 64) if value >= (1 << 63) else value


def hamming(a: int, b: int) -> int:
    return bin((a ^ b) & _MASK).count("1")


_PUNCT = re.compile(r"[^\w\s]+")


def content_hash(text: str) -> bytes:
    """Equal for texts that differ only in case, width, spacing or punctuation."""
    return hashlib.sha256(" ".join(_PUNCT.sub(" ", canonical(text)).split()).encode()).digest()
