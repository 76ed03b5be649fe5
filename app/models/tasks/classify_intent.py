"""``classify_intent.v1``: which of six intents a recall query has (seed 000, QueryClassify).

The intent picks the scoring weights, the retrieval mode and fast/slow thinking downstream. The heuristic is the
seed's zero-cost keyword layer (EN + ZH); the read track fuses it with the embedding-archetype layer and calls an
LLM only when the fused confidence stays low.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from app.models.tasks.base import Task, register
from app.models.tasks.text import content_terms, latin_words

Intent = Literal["entity_lookup", "factual", "conceptual", "exploratory", "cross_domain", "unknown"]
INTENTS: tuple[Intent, ...] = (
    "entity_lookup",
    "factual",
    "conceptual",
    "exploratory",
    "cross_domain",
    "unknown",
)


class ClassifyIntentInput(BaseModel):
    query: str = Field(min_length=1)


class ClassifyIntentOutput(BaseModel):
    intent: Intent
    confidence: float = Field(ge=0.0, le=1.0)
    scores: dict[str, float] = Field(default_factory=dict, description="Evidence per intent (0-1).")
    reason: str = ""


# (regex, weight) per intent. Regexes are matched case-insensitively on the raw query.
CUES: dict[str, list[tuple[str, float]]] = {
    "entity_lookup": [
        (r"^\s*who\s+(is|was|are)\b", 1.0),
        (r"\bwho'?s\b", 0.8),
        (r"\btell me about\b", 0.7),
        (r"\b(profile|contact|email|phone number|address|birthday)\b( of| for)?", 0.6),
        (r"^\s*(what|which)\s+is\s+[A-Z][\w-]+\??\s*$", 0.6),
        (r"\b(info|information) (on|about)\b", 0.6),
        (r"是誰|是谁|誰是|谁是|介紹一下|介绍一下|的資料|的资料|聯絡方式|联系方式|的電話|的电话", 1.0),
    ],
    "factual": [
        (r"^\s*(when|where|how many|how much|how long|how old|what time|what date|which)\b", 1.0),
        (r"^\s*(did|does|do|is|was|were|has|have|had|can)\s+(i|we|he|she|they|you|\w+)\b", 0.6),
        (r"\bwhat (did|does|do|was|were|is)\s+(i|we|my|our|he|she|they)\b", 0.8),
        (r"\b(progress|status|latest|update|deadline|date|number|price|cost|version)\b", 0.5),
        (
            r"什麼時候|什么时候|何時|何时|哪裡|哪里|哪天|幾點|几点|幾個|几个|多少|多久|多大|是否|有沒有|有没有|進度|进度|狀態|状态|日期|截止",
            1.0,
        ),
    ],
    "conceptual": [
        (r"^\s*why\b", 0.9),
        (r"\bhow (does|do|did|is|are)\b.*\bwork", 1.0),
        (r"\bexplain\b", 1.0),
        (r"\bwhat (is|are) (the )?(difference|meaning|definition|concept|idea|principle|purpose)\b", 1.0),
        (r"\b(difference between|concept of|definition of|principle|theory|mechanism|in general)\b", 0.7),
        (r"^\s*what (is|are) (a|an)\b", 0.6),
        (r"\bmeaning of\b", 0.8),
        (
            r"為什麼|为什么|什麼是|什么是|原理|概念|解釋|解释|差別|差别|區別|区别|定義|定义|意思|機制|机制",
            1.0,
        ),
    ],
    "exploratory": [
        (r"\bshould (i|we)\b", 1.0),
        (r"\bwhat do you think\b", 1.0),
        (r"\b(suggest|suggestion|recommend|advice|advise)", 0.9),
        (r"\b(idea|ideas|brainstorm|options|alternatives|approach|strategy)\b", 0.7),
        (r"\b(i'?m|i am) (thinking|considering|wondering|planning)\b", 0.9),
        (r"\bwhat if\b", 0.9),
        (r"\bhow (can|could|might|should) (i|we)\b", 0.8),
        (r"\b(worth it|pros and cons|next step)", 0.7),
        (
            r"你覺得|你觉得|建議|建议|想法|點子|点子|應該|应该|要不要|考慮|考虑|如果|怎麼辦|怎么办|方向|下一步|值得",
            1.0,
        ),
    ],
    "cross_domain": [
        (r"\b(relationship|relation|connection|link|links)\s+between\b", 1.0),
        (r"\bhow (does|do|is|are|did)\b.+\b(relate|related|connect|connected|affect|influence)", 1.0),
        (r"\b(across|cross-domain|cross domain|intersection|in common|both)\b", 0.6),
        (r"\bcompare\b.+\b(with|to|and)\b", 0.7),
        (r"\b(versus|vs\.?)\b", 0.5),
        (r"之間|之间|關係|关系|關聯|关联|連結|连结|結合|结合|跨|共同點|共同点|影響|影响|比較|比较", 1.0),
    ],
}


def classify_intent_heuristic(payload: ClassifyIntentInput) -> ClassifyIntentOutput:
    """Keyword rules: each intent sums the weights of its cues that match (capped at 1.0); the best wins.

    Confidence grows with the winner's evidence and its margin over the runner-up. A query no rule matches is
    ``unknown`` at 0.3, except a short query of names only (``"Caroline"``, ``"OCR 專案"``), which is
    ``entity_lookup``.
    """
    q = payload.query.strip()
    scores = {
        name: min(1.0, sum(w for rx, w in cues if re.search(rx, q, re.I))) for name, cues in CUES.items()
    }
    # "how does X relate to Y" is cross-domain, not conceptual.
    if scores["cross_domain"] >= 1.0 and scores["conceptual"] < 1.0:
        scores["conceptual"] *= 0.5
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    (best, top), (_, second) = ranked[0], ranked[1]
    if top == 0.0:
        words = latin_words(q)
        if 0 < len(content_terms(q)) <= 3 and (len(words) <= 3 and any(c.isupper() for c in q) or not words):
            return ClassifyIntentOutput(
                intent="entity_lookup", confidence=0.5, scores=scores, reason="a bare name or term"
            )
        return ClassifyIntentOutput(
            intent="unknown", confidence=0.3, scores=scores, reason="no intent cue matched"
        )
    confidence = round(min(0.95, 0.45 + 0.3 * top + 0.3 * (top - second)), 3)
    return ClassifyIntentOutput(
        intent=best,  # type: ignore[arg-type]
        confidence=confidence,
        scores=scores,
        reason=f"keyword cues for {best} (evidence {top:.2f}, runner-up {second:.2f})",
    )


SYSTEM = """You classify the intent of a query sent to a personal memory service.
Intents:
- entity_lookup: about one person, project, place or thing by name ("who is Maria", "Caroline's email").
- factual: a specific fact, date, number, place or status ("when did I move", "progress on the OCR project").
- conceptual: an explanation or definition ("why does X happen", "what is the difference between A and B").
- exploratory: advice, ideas or open-ended thinking ("should I switch jobs", "what do you think about X").
- cross_domain: the relation between two or more areas ("how does my diet relate to my sleep").
- unknown: none of these.
The query may be in English or Chinese. Give a confidence between 0 and 1."""

CLASSIFY_INTENT: Task[ClassifyIntentInput, ClassifyIntentOutput] = register(
    Task(
        name="classify_intent",
        version=1,
        input_model=ClassifyIntentInput,
        output_model=ClassifyIntentOutput,
        system=SYSTEM,
        render=lambda p: f"Query: {p.query}",
        heuristic=classify_intent_heuristic,
        max_tokens=200,
    )
)
