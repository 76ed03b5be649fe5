"""LLM backends: ``heuristic`` (offline default), ``openai`` (OpenAI-compatible chat), ``mlx`` (mlx-lm).

Import the heavy ones from their modules; :meth:`app.models.registry.ModelCache.llm` picks one from settings.
"""

from app.models.llms.structured import HeuristicLLM, LLMStats, StructuredLLM

__all__ = ["HeuristicLLM", "LLMStats", "StructuredLLM"]
