"""A named, versioned LLM task: prompt builder, Pydantic input and output, heuristic twin.

The model decides, code applies (STYLE.md 7): a task's output is a validated Pydantic object; what the caller does
with it (supersede a block, drop a candidate) is plain code elsewhere. A prompt change that alters the output's
meaning gets a new version (``resolve_conflict.v2``); the name+version is logged with every decision.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

I = TypeVar("I", bound=BaseModel)
O = TypeVar("O", bound=BaseModel)

_REGISTRY: dict[str, Task[Any, Any]] = {}


@dataclass(frozen=True, eq=False)
class Task(Generic[I, O]):
    name: str
    version: int
    input_model: type[I]
    output_model: type[O]
    system: str
    """The system prompt: what the model is and the rules of the task."""
    render: Callable[[I], str]
    """Builds the user message from the payload."""
    heuristic: Callable[[I], O]
    """The deterministic twin: used by the ``heuristic`` backend and as the fallback for invalid output."""
    postprocess: Callable[[I, O], O] | None = None
    """Checks a model's output against the payload (raise ValueError: invalid) and normalizes it."""
    max_tokens: int = 1024
    temperature: float = 0.0
    examples: tuple[tuple[dict[str, Any], dict[str, Any]], ...] = field(default=())
    """Optional few-shot (payload, output) pairs placed before the real payload."""

    @property
    def id(self) -> str:
        return f"{self.name}.v{self.version}"

    def json_schema(self) -> dict[str, Any]:
        """The output's JSON schema with ``$ref`` inlined (some servers' grammar engines do not follow refs)."""
        return inline_refs(self.output_model.model_json_schema())

    def messages(self, payload: I) -> list[dict[str, str]]:
        schema = json.dumps(self.json_schema(), ensure_ascii=False, separators=(",", ":"))
        system = f"{self.system}\n\nReply with one JSON object only, no prose, matching this JSON schema:\n{schema}"
        msgs = [{"role": "system", "content": system}]
        for ex_in, ex_out in self.examples:
            msgs.append({"role": "user", "content": self.render(self.input_model.model_validate(ex_in))})
            msgs.append({"role": "assistant", "content": json.dumps(ex_out, ensure_ascii=False)})
        msgs.append({"role": "user", "content": self.render(payload)})
        return msgs

    def validate_output(self, payload: I, data: Any) -> O:
        """Parsed JSON -> output model (+ postprocess). Raises pydantic.ValidationError or ValueError."""
        out = self.output_model.model_validate(data)
        if self.postprocess is not None:
            out = self.postprocess(payload, out)
        return out


def register(task: Task[I, O]) -> Task[I, O]:
    if task.name in _REGISTRY and _REGISTRY[task.name].version > task.version:
        return task
    _REGISTRY[task.name] = task
    return task


def get_task(name: str) -> Task[Any, Any]:
    """The latest registered version of the task called ``name`` (e.g. ``"fit_gate"``)."""
    import app.models.tasks  # noqa: F401  (registers every task)

    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown task {name!r}; known: {sorted(_REGISTRY)}") from None


def all_tasks() -> dict[str, Task[Any, Any]]:
    import app.models.tasks  # noqa: F401

    return dict(_REGISTRY)


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node and node["$ref"].startswith("#/$defs/"):
                target = defs[node["$ref"].split("/")[-1]]
                merged = {**walk(target), **{k: walk(v) for k, v in node.items() if k != "$ref"}}
                return merged
            return {k: walk(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(schema)


def payload_json(model: BaseModel, **dump_kwargs: Any) -> str:
    return json.dumps(model.model_dump(mode="json", **dump_kwargs), ensure_ascii=False, indent=1)
