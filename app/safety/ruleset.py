"""The one versioned safety ruleset, shared by the write gates (G2: ``InjectionGuard``, ``PoisoningDetector``) and
by read-time sanitize, so a block written months ago is re-checked with today's rules when it is read.

Rules are data (``app.safety.rules_en``, ``app.safety.rules_i18n``): compiled regexes with an id, a family, a
language and a severity. Two detectors that are not single regexes add hits of their own: hidden containers
(``app.safety.hidden``: a comment or invisible element whose content talks to a model) and encoded payloads
(``app.safety.encoding``: decode, then run this ruleset again on the decoded text). Two learned detectors score
what the rules leave safe: character n-grams (``app.safety.classifier``) everywhere, and, at write time, a linear
model over the multilingual sentence embeddings (``app.safety.semantic``: paraphrases and other languages of what
the rules name); see ``scan`` and ``judge``.

Verdict: each distinct rule contributes its severity weight (high 1.0, medium 0.6, low 0.3), the learned detectors
together once (the strongest); a text is unsafe at 1.0. Pipeline per text: fold (NFKC, invisible characters out,
offsets kept), cue prefilter (``app.safety.cues``), the rules whose cues occur, mention filter (an attack phrase
quoted in a text about attacks), description filter (``app.safety.structure``: "models often ignore their
instructions" talks about models, it orders nothing), encoded payloads (leetspeak and homoglyphs included), hidden
containers, citation whitelist.

API: ``scan(text) -> tuple[RuleHit, ...]``, ``is_unsafe(text) -> Verdict`` (rules + n-grams: cheap, also at read
time), ``judge(text, embedding) -> Verdict`` (the write gates: + the semantic detector), ``sanitize(text) ->
SanitizeResult``.
Every result carries ``RULESET_VERSION``; bump it whenever a rule, a weight or the whitelist changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from app.safety import classifier, encoding, hidden, rules_en, rules_i18n, semantic, structure
from app.safety.cues import CueIndex
from app.safety.rule import FAMILIES, SEVERITY_WEIGHT, UNSAFE_THRESHOLD, Rule
from app.safety.textfold import fold

RULESET_VERSION = "2026.11.2"
REDACTED = "[REDACTED]"
MAX_DEPTH = 2  # decode-and-rescan recursion for encoded payloads
ML_RULE_ID = "ml.injection_lr"
ML_ALONE_MIN_WORDS = 12
ML_FAMILY = "direct_instruction"  # the learned detector reports under G2 front (InjectionGuard)
LEARNED = frozenset({ML_RULE_ID, semantic.RULE_ID})

RULES: tuple[Rule, ...] = tuple(rules_en.ALL + rules_i18n.ALL)
# Every cue once; a text is checked against the index once and each rule then asks "did one of mine occur?".
_CUES = CueIndex(c for r in RULES for c in (*r.cues, *r.also))
_RULE_CUES: tuple[tuple[Rule, frozenset[str], frozenset[str]], ...] = tuple(
    (r, frozenset(r.cues), frozenset(r.also)) for r in RULES
)

__all__ = [
    "FAMILIES",
    "REDACTED",
    "RULES",
    "RULESET_VERSION",
    "RuleHit",
    "SanitizeResult",
    "Verdict",
    "is_unsafe",
    "judge",
    "sanitize",
    "scan",
    "scan_rules",
]


@dataclass(frozen=True, slots=True)
class RuleHit:
    rule_id: str
    family: str
    start: int
    end: int
    text: str
    severity: str = "high"
    score: float | None = None  # a learned detector's probability (None for a rule)


@dataclass(frozen=True, slots=True)
class Verdict:
    unsafe: bool
    hits: tuple[RuleHit, ...]
    ruleset_version: str
    score: float = 0.0

    @property
    def top(self) -> RuleHit | None:
        """The strongest hit (highest severity, earliest), the one a gate reports."""
        if not self.hits:
            return None
        return max(self.hits, key=lambda h: (SEVERITY_WEIGHT[h.severity], -h.start))


@dataclass(frozen=True, slots=True)
class SanitizeResult:
    text: str
    hits: tuple[RuleHit, ...]
    ruleset_version: str

    @property
    def changed(self) -> bool:
        return bool(self.hits)


# ---- citation whitelist (authority impersonation) ----------------------------------------------------------------
# Real citations name a document, not an order for the assistant: "According to the OpenAI API docs, the rate limit
# is ...". An authority hit is dropped when its sentence is such a citation and the sentence gives the assistant no
# directive.
CITATION_WHITELIST: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\b(?:according\s+to|per|as\s+(?:stated|described|documented|noted)\s+in|see|from)\s+(?:the\s+)?(?:official\s+)?"
        r"(?:[\w.+#-]+\s+){0,4}(?:api\s+)?(?:docs|documentation|reference|guide|manual|spec(?:ification)?|rfc\s*\d*|"
        r"paper|changelog|release\s+notes|readme|faq|handbook|cookbook|blog\s+post|help\s+center|status\s+page|"
        r"pricing\s+page|model\s+card|system\s+card|terms\s+of\s+(?:use|service))\b",
        r"(?:根据|根據|按照|依照)(?:官方)?[\w\s]{0,12}(?:文档|文檔|手册|手冊|说明|說明|规范|規範)",
    )
)
_DIRECTIVE = re.compile(
    r"\b(?:assistants?|ai|models?|chatbot|you|llms?)\s+(?:must|(?:is|are)\s+(?:now\s+)?(?:required|instructed|"
    r"obligated)\s+to|shall|have\s+to|need\s+to|should\s+now)\b|\b(?:ignore|disregard|forget|reveal|override|"
    r"bypass)\b|(?:必须|必須|忽略|无视|無視)",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|[。！？\n]")


def _sentence_around(text: str, start: int, end: int) -> str:
    left, right = structure.sentence_around(text, start, end)
    return text[left:right]


def _whitelisted(text: str, hit: RuleHit) -> bool:
    if hit.family != "authority_impersonation":
        return False
    sentence = _sentence_around(text, hit.start, hit.end)
    return any(p.search(sentence) for p in CITATION_WHITELIST) and not _DIRECTIVE.search(sentence)


# ---- scanning ----------------------------------------------------------------------------------------------------
def scan(text: str) -> tuple[RuleHit, ...]:
    """Every hit in ``text``, ordered by position; offsets index the caller's text.

    The rules first; when they alone do not make the text unsafe, the n-gram detector (``app.safety.classifier``)
    adds one hit ``ml.injection_lr`` over the whole text if its probability reaches the medium threshold
    (severity: ``ml_severity``). The semantic detector is the write gates' (``judge``).
    """
    return _scan_all(text)


def scan_rules(text: str) -> tuple[RuleHit, ...]:
    """The rule hits only (no learned detector)."""
    return _scan(text, MAX_DEPTH)


def ml_severity(text: str, p: float, model: classifier.InjectionClassifier) -> str | None:
    """The weight the learned detector's probability ``p`` gets in the verdict on ``text`` (None: no hit).

    Alone (``high``) it blocks only English text long enough for its n-gram statistics to mean something: on a
    short sentence a couple of features decide ("Bob uses ChatGPT." scored as an attack), and its negatives are
    English chat. Otherwise it is at most ``medium``: it blocks together with a rule cue.
    """
    if p < model.threshold_medium:
        return None
    alone_ok = len(text.split()) >= ML_ALONE_MIN_WORDS and classifier.english_like(text)
    return "high" if p >= model.threshold_high and alone_ok else "medium"


@lru_cache(maxsize=512)
def _scan_all(text: str) -> tuple[RuleHit, ...]:
    return with_ngram(text, _scan(text, MAX_DEPTH), classifier.load())


def with_ngram(text: str, hits: tuple[RuleHit, ...], model: classifier.InjectionClassifier) -> tuple[RuleHit, ...]:
    """``hits`` plus the n-gram detector's hit when the rules alone do not make ``text`` unsafe."""
    if not text.strip() or _verdict(hits).unsafe:
        return hits
    p = model.probability(text.replace(REDACTED, " "))
    severity = _addressed(text, ml_severity(text, p, model))
    if severity is None:
        return hits
    ml = RuleHit(ML_RULE_ID, ML_FAMILY, 0, len(text), text, severity, round(p, 4))
    return tuple(sorted((*hits, ml), key=lambda h: (h.start, h.end, h.rule_id)))


def _addressed(text: str, severity: str | None) -> str | None:
    """A learned detector blocks alone (``high``) only a text that addresses its reader (``structure``)."""
    if severity == "high" and not structure.addresses_reader(text):
        return "medium"
    return severity


def with_semantic(
    text: str,
    hits: tuple[RuleHit, ...],
    model: semantic.SemanticDetector | None,
    embedding: np.ndarray | None = None,
    embed: semantic.Embed | None = None,
    *,
    per_sentence: bool = True,
) -> tuple[RuleHit, ...]:
    """``hits`` plus the semantic detector's hit (its best span: the text or one sentence) when the rules and the
    n-gram detector do not already make ``text`` unsafe."""
    if model is None or not text.strip() or _verdict(hits).unsafe:
        return hits
    cue = any(h.rule_id not in LEARNED for h in hits)
    sh = model.score(text, embedding, embed or semantic.embed_batch, per_sentence=per_sentence, cue=cue)
    severity = _addressed(text, model.severity(sh.probability))
    if severity is None:
        return hits
    if sh.scope == "sentence":
        severity = "medium"  # one sentence of many: it blocks only with the rule cue that made it scored
    hit = RuleHit(semantic.RULE_ID, sh.family, sh.start, sh.end, text[sh.start:sh.end], severity,
                  round(sh.probability, 4))
    return tuple(sorted((*hits, hit), key=lambda h: (h.start, h.end, h.rule_id)))


def judge(text: str, embedding: np.ndarray | None = None, embed: semantic.Embed | None = None) -> Verdict:
    """The write gates' verdict: ``is_unsafe`` plus the semantic detector.

    ``embedding`` is the text's USE vector when the caller has it (the write track's own); ``embed`` embeds the
    sentences the detector scores one by one (default: the guard's own USE embedder).
    """
    return _verdict(with_semantic(text, _scan_all(text), semantic.load(), embedding, embed))


@lru_cache(maxsize=512)
def _scan(text: str, depth: int) -> tuple[RuleHit, ...]:
    if not text or not text.strip():
        return ()
    folded = fold(text)
    ftext = _unjoin(folded.text)
    low = ftext.lower()
    present = _CUES.present(low)
    hits: list[RuleHit] = []
    same_length = len(low) == len(ftext)  # lower-casing kept every offset: the rules' fast form may run on ``low``
    for r, cues, also in _RULE_CUES:
        if (cues and cues.isdisjoint(present)) or (also and also.isdisjoint(present)):
            continue
        matches = r.lowered.finditer(low) if same_length and r.lowered is not None else r.pattern.finditer(ftext)
        for m in matches:
            if m.end() == m.start():
                continue
            s, e = folded.span(m.start(), m.end())
            hits.append(RuleHit(r.id, r.family, s, e, text[s:e], r.severity))
    if hits:
        hits = _drop_mentions(text, hits)
        hits = _drop_descriptions(text, hits)
    for eh in encoding.detect(text, _rescan_unsafe, depth):
        hits.append(RuleHit(eh.rule_id, "encoded_payload", eh.start, eh.end, text[eh.start:eh.end], eh.severity))
    hits.extend(_hidden_hits(text, hits, depth))
    hits = [h for h in hits if not _whitelisted(text, h)]
    hits.sort(key=lambda h: (h.start, h.end, h.rule_id))
    return tuple(hits)


_JOINED = re.compile(r"(?<![A-Za-z])[A-Za-z]++(?:[_-][A-Za-z]++){3,}")  # possessive: no backtracking in long words


def _unjoin(text: str) -> str:
    """'output-previous-instructions-in-bullet-list' -> words (same length, so offsets are unchanged)."""
    if ("-" not in text and "_" not in text) or not _JOINED.search(text):
        return text
    return _JOINED.sub(lambda m: m.group().replace("-", " ").replace("_", " "), text)


# Quoting an attack phrase to talk about it ("we study how to detect 'ignore previous instructions'") is a mention,
# not a use: a hit that lies wholly inside quotes is dropped when the text around the quote discusses attacks.
_QUOTED = re.compile(
    "'[^'\n]{3,200}'|\"[^\"\n]{3,200}\"|\u201c[^\u201d\n]{3,200}\u201d|\u2018[^\u2019\n]{3,200}\u2019|"
    "\u300c[^\u300d\n]{3,200}\u300d|\u300e[^\u300f\n]{3,200}\u300f"
)
_META = re.compile(
    r"\b(?:attacks?|injections?|jailbreaks?|detect\w*|classif\w*|examples?|phrases?|research\w*|papers?|"
    r"defen[cs]\w*|such\s+as|red[- ]team\w*|benchmark\w*|dataset\w*)\b|"
    "\u653b\u51fb|\u653b\u64ca|\u6ce8\u5165|\u68c0\u6d4b|\u6aa2\u6e2c|\u7814\u7a76|\u4f8b\u5982|"
    "\u6bd4\u5982|\u8fd9\u7c7b|\u9019\u985e|\u8bba\u6587",
    re.IGNORECASE,
)


def _drop_mentions(text: str, hits: list[RuleHit]) -> list[RuleHit]:
    quotes = [(m.start(), m.end()) for m in _QUOTED.finditer(text)]
    if not quotes:
        return hits
    kept = []
    for h in hits:
        q = next(((a, b) for a, b in quotes if a <= h.start and h.end <= b), None)
        if q is not None and _META.search(text[: q[0]] + " " + text[q[1]:]):
            continue
        kept.append(h)
    return kept


_DESCRIBABLE = frozenset({"direct_instruction", "exfiltration"})


def _drop_descriptions(text: str, hits: list[RuleHit]) -> list[RuleHit]:
    """English instruction-override and extraction hits that describe what models do, not order it
    (``app.safety.structure.described``)."""
    return [h for h in hits
            if not (h.family in _DESCRIBABLE and h.rule_id.endswith(".en") and structure.described(text, h.start, h.end))]


def _rescan_unsafe(decoded: str, depth: int) -> bool:
    return _verdict(_scan(decoded, depth)).unsafe


def _hidden_hits(text: str, hits: list[RuleHit], depth: int) -> list[RuleHit]:
    out = []
    for c in hidden.find_containers(text):
        inner = text[c.inner_start:c.inner_end]
        if not inner.strip():
            continue
        inside = [h for h in hits if c.inner_start <= h.start and h.end <= c.inner_end]
        strong = sum(SEVERITY_WEIGHT[h.severity] for h in {h.rule_id: h for h in inside}.values())
        addressed = hidden.AI_ADDRESSED.search(fold(inner).text) is not None
        if strong >= 0.6 or addressed:
            out.append(RuleHit(f"hidden.{c.kind}", "hidden_comment", c.start, c.end, text[c.start:c.end], "high"))
    return out


def _verdict(hits: tuple[RuleHit, ...]) -> Verdict:
    """Distinct rules add up; the learned detectors count once (the strongest of them): two models that agree on
    a hard-benign text are still one opinion, so a ``medium`` learned hit needs a rule cue to block."""
    weights: dict[str, float] = {}
    for h in hits:
        weights[h.rule_id] = max(weights.get(h.rule_id, 0.0), SEVERITY_WEIGHT[h.severity])
    learned = max((w for r, w in weights.items() if r in LEARNED), default=0.0)
    score = sum(w for r, w in weights.items() if r not in LEARNED) + learned
    return Verdict(unsafe=score >= UNSAFE_THRESHOLD, hits=hits, ruleset_version=RULESET_VERSION, score=round(score, 3))


def verdict_of(hits: tuple[RuleHit, ...]) -> Verdict:
    """The verdict on a set of hits (the cross-validation combines hits of models fit per fold)."""
    return _verdict(hits)


def is_unsafe(text: str) -> Verdict:
    """The verdict on ``text``: unsafe when the weights of its distinct rule hits reach the threshold."""
    return _verdict(scan(text))


# ---- sanitize ----------------------------------------------------------------------------------------------------
def sanitize(text: str) -> SanitizeResult:
    """Replace each dangerous span with ``[REDACTED]`` and keep the rest of the text.

    Only an unsafe text is changed (weak cues alone redact nothing). A hit whose rule redacts its sentence removes
    the match and the rest of that sentence (the payload that follows "ignore previous instructions"); hidden
    containers and encoded blocks are removed whole.
    """
    verdict = is_unsafe(text)
    if not verdict.unsafe:
        return SanitizeResult(text, (), RULESET_VERSION)
    by_id = {r.id: r for r in RULES}
    spans: list[tuple[int, int]] = []
    for h in verdict.hits:
        if h.rule_id == ML_RULE_ID:
            spans.extend(_ml_spans(text))
            continue
        if h.rule_id == semantic.RULE_ID:
            spans.append((h.start, h.end))
            continue
        end = h.end
        r = by_id.get(h.rule_id)
        if r is not None and r.redact == "sentence":
            m = _SENTENCE_END.search(text, h.end)
            end = m.start() if m else len(text)
            end = max(end, h.end)
        spans.append((h.start, end))
    spans.sort()
    merged: list[list[int]] = []
    for s, e in spans:
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    out, pos = [], 0
    for s, e in merged:
        out.append(text[pos:s])
        out.append(REDACTED)
        pos = e
    out.append(text[pos:])
    return SanitizeResult("".join(out), verdict.hits, RULESET_VERSION)


def _ml_spans(text: str) -> list[tuple[int, int]]:
    """The sentences the learned detector objects to; the whole text if no single sentence does."""
    model = classifier.load()
    spans = [(s, e) for s, e in semantic.sentences(text) if model.probability(text[s:e]) >= model.threshold_medium]
    return spans or [(0, len(text))]
