"""``predict_next_questions.v1``: the last N utterances -> the top-3 questions the user is likely to ask next
(seed 000, Slow Thinker's NextQuestionPredictor). Questions must be specific: no "and then what?"."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from app.models.tasks.base import Task, register
from app.models.tasks.text import is_cjk, key_phrases

WINDOW = 8
MAX_QUESTIONS = 3


class PredictInput(BaseModel):
    utterances: list[str] = Field(description="Most recent last.")


class PredictedQuestion(BaseModel):
    question: str = Field(min_length=3)
    confidence: float = Field(ge=0.0, le=1.0)


class PredictOutput(BaseModel):
    questions: list[PredictedQuestion] = Field(max_length=MAX_QUESTIONS)


_EN_TEMPLATES = (
    "What is the latest on {t}?",
    "What did I decide about {t}?",
    "When is {t} due?",
)
_ZH_TEMPLATES = ("{t}的進度如何？", "關於{t}我之前決定了什麼？", "{t}是什麼時候？")
_VAGUE = re.compile(r"^(and )?(then )?what( next| else)?\??$|^(ok|so)\??$|^然後呢|^还有呢|^還有呢", re.I)


def predict_heuristic(payload: PredictInput) -> PredictOutput:
    """Topic phrases of the last 8 utterances, weighted toward the most recent (weight doubles every 2 turns),
    each turned into a specific question from templates (status, decision, date); EN or ZH after the last
    utterance's language. Confidence 0.55, 0.45, 0.35 down the list, +0.05 when the topic is in the last turn."""
    recent = [u for u in payload.utterances[-WINDOW:] if u.strip()]
    if not recent:
        return PredictOutput(questions=[])
    weights = [2 ** ((i - len(recent) + 1) / 2) for i in range(len(recent))]
    topics = key_phrases(recent, limit=MAX_QUESTIONS, weights=weights)
    zh = is_cjk(recent[-1])
    templates = _ZH_TEMPLATES if zh else _EN_TEMPLATES
    questions: list[PredictedQuestion] = []
    for rank, topic in enumerate(topics):
        # The top topic gets the status question; the others cycle through the templates.
        tpl = templates[rank % len(templates)]
        bonus = 0.05 if topic.lower() in recent[-1].lower() else 0.0
        questions.append(
            PredictedQuestion(question=tpl.format(t=topic), confidence=round(0.55 - 0.1 * rank + bonus, 2))
        )
    return PredictOutput(questions=questions)


def _postprocess(payload: PredictInput, out: PredictOutput) -> PredictOutput:
    kept = [q for q in out.questions if not _VAGUE.match(q.question.strip())]
    if out.questions and not kept:
        raise ValueError("only vague questions predicted")
    return PredictOutput(questions=sorted(kept, key=lambda q: -q.confidence)[:MAX_QUESTIONS])


SYSTEM = """You predict what the user will ask their memory assistant next, from the last utterances of the
conversation. Give up to 3 questions, most likely first, each specific (it names the topic, person, project or
thing; never "and then what?"), each with a confidence between 0 and 1. Use the conversation's language."""


PREDICT_NEXT_QUESTIONS: Task[PredictInput, PredictOutput] = register(
    Task(
        name="predict_next_questions",
        version=1,
        input_model=PredictInput,
        output_model=PredictOutput,
        system=SYSTEM,
        render=lambda p: (
            "Recent utterances (oldest first):\n" + "\n".join(f"- {u}" for u in p.utterances[-WINDOW:])
        ),
        heuristic=predict_heuristic,
        postprocess=_postprocess,
        max_tokens=300,
    )
)
