"""``mlx``: an mlx-lm model from a local directory (``config.json``, ``*.safetensors``, tokenizer files).

The fast path on Apple silicon; on Linux CPU it runs through ``mlx[cpu]`` at a few tokens per second (DESIGN.md
section 4), so it is never the Linux default. Same prompt / parse / fallback path as the openai backend
(:class:`~app.models.llms.structured.StructuredLLM`). Nothing is downloaded: a path that does not exist is a
ConfigError (mlx-lm would otherwise treat it as a Hub repository name).

Generation runs in the service's model pool (``calls``: :class:`~app.models.calls.ModelCalls`, sized by
``MEMVAULT_MODEL_THREADS``), one at a time per model (an MLX model is not safe to drive from two threads),
bounded by ``timeout_s``: on timeout the caller gets the heuristic answer while the thread finishes its tokens.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.errors import ConfigError, ModelError
from app.models.breaker import CircuitBreaker
from app.models.llms.structured import StructuredLLM
from app.models.tasks.base import Task

if TYPE_CHECKING:
    from app.models.calls import ModelCalls


def check_model_dir(path: Path, what: str) -> Path:
    path = Path(path).expanduser()
    if not path.is_dir():
        raise ConfigError(
            f"{what}: {path} is not a directory", hint="give a local model directory; nothing is downloaded"
        )
    if not (path / "config.json").is_file():
        raise ConfigError(f"{what}: {path} has no config.json")
    if not list(path.glob("*.safetensors")):
        raise ConfigError(f"{what}: {path} has no *.safetensors weights")
    return path


class MLXLLM(StructuredLLM):
    name = "mlx"

    def __init__(
        self,
        model_path: Path,
        *,
        breaker: CircuitBreaker,
        calls: ModelCalls,
        timeout_s: float = 120.0,
        max_tokens: int | None = None,
        sampler: Callable[..., Any] | None = None,
    ) -> None:
        super().__init__(breaker=breaker)
        self.model_path = check_model_dir(model_path, "mlx llm")
        self.timeout_s = timeout_s
        self.calls = calls
        self.max_tokens = max_tokens
        self._sampler = sampler  # tests inject a scripted sampler; default: greedy / temperature sampling
        self._model: Any = None
        self._tokenizer: Any = None
        self._load_lock = threading.Lock()
        self._gen_lock = threading.Lock()  # held by the generating thread, even past a timeout

    def _load(self) -> tuple[Any, Any]:
        with self._load_lock:
            if self._model is None:
                from mlx_lm import load

                self._model, self._tokenizer = load(str(self.model_path))
            return self._model, self._tokenizer

    def render_prompt(self, messages: list[dict[str, str]]) -> str:
        """The chat template of the model if it has one, else a plain role-tagged transcript."""
        _, tokenizer = self._load()
        if getattr(tokenizer, "chat_template", None):
            return tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        parts = [f"{m['role'].capitalize()}: {m['content']}" for m in messages]
        return "\n\n".join(parts) + "\n\nAssistant:"

    def _generate(self, task: Task[Any, Any], messages: list[dict[str, str]]) -> str:
        from mlx_lm import generate
        from mlx_lm.sample_utils import make_sampler

        model, tokenizer = self._load()
        prompt = self.render_prompt(messages)
        sampler = self._sampler or make_sampler(temp=task.temperature)
        with self._gen_lock:
            return generate(
                model,
                tokenizer,
                prompt=prompt,
                max_tokens=self.max_tokens or task.max_tokens,
                sampler=sampler,
            )

    async def _complete(
        self, task: Task[Any, Any], messages: list[dict[str, str]], schema: dict[str, Any]
    ) -> str:
        try:
            return await asyncio.wait_for(self.calls.run(self._generate, task, messages), self.timeout_s)
        except TimeoutError as exc:
            raise ModelError(f"mlx generation exceeded {self.timeout_s:g}s") from exc
