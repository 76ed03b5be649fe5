"""Named, versioned LLM tasks (``name.vN``): each has a prompt, a Pydantic input and output, and a heuristic twin
good enough for the whole system to run with no LLM. Importing this package registers all of them.

    from app.models.tasks import RESOLVE_CONFLICT
    verdict = await llm.run(RESOLVE_CONFLICT, {"existing": old, "new": new, "similarity": 0.87})
"""

from app.models.tasks.base import Task, all_tasks, get_task
from app.models.tasks.classify_intent import CLASSIFY_INTENT, ClassifyIntentInput, ClassifyIntentOutput
from app.models.tasks.crag_evaluate import CRAG_EVALUATE, CragInput, CragOutput
from app.models.tasks.extract_atomic_units import (
    EXTRACT_ATOMIC_UNITS,
    AtomicUnit,
    ExtractUnitsInput,
    ExtractUnitsOutput,
    TurnIn,
)
from app.models.tasks.extract_triples import (
    EXTRACT_TRIPLES,
    ExtractTriplesInput,
    ExtractTriplesOutput,
    Triple,
)
from app.models.tasks.fit_gate import FIT_GATE, FitGateInput, FitGateOutput, FitVerdict
from app.models.tasks.lint_judge import LINT_JUDGE, LintInput, LintIssue, LintMemory, LintOutput
from app.models.tasks.predict_next_questions import (
    PREDICT_NEXT_QUESTIONS,
    PredictedQuestion,
    PredictInput,
    PredictOutput,
)
from app.models.tasks.reflect import REFLECT, Gap, Insight, ReflectInput, ReflectOutput
from app.models.tasks.resolve_conflict import RESOLVE_CONFLICT, ResolveConflictInput, ResolveConflictOutput
from app.models.tasks.summarize import SUMMARIZE, SummarizeInput, SummarizeOutput

__all__ = [
    "CLASSIFY_INTENT",
    "CRAG_EVALUATE",
    "EXTRACT_ATOMIC_UNITS",
    "EXTRACT_TRIPLES",
    "FIT_GATE",
    "LINT_JUDGE",
    "PREDICT_NEXT_QUESTIONS",
    "REFLECT",
    "RESOLVE_CONFLICT",
    "SUMMARIZE",
    "AtomicUnit",
    "ClassifyIntentInput",
    "ClassifyIntentOutput",
    "CragInput",
    "CragOutput",
    "ExtractTriplesInput",
    "ExtractTriplesOutput",
    "ExtractUnitsInput",
    "ExtractUnitsOutput",
    "FitGateInput",
    "FitGateOutput",
    "FitVerdict",
    "Gap",
    "Insight",
    "LintInput",
    "LintIssue",
    "LintMemory",
    "LintOutput",
    "PredictInput",
    "PredictOutput",
    "PredictedQuestion",
    "ReflectInput",
    "ReflectOutput",
    "ResolveConflictInput",
    "ResolveConflictOutput",
    "SummarizeInput",
    "SummarizeOutput",
    "Task",
    "Triple",
    "TurnIn",
    "all_tasks",
    "get_task",
]
