"""Reranker backends: ``http`` (a /v1/rerank server), ``mlx`` (a local cross-encoder), ``fitgate`` (the LLM
keep/drop gate of seed 003). ``none`` is no object at all: :meth:`app.models.registry.ModelCache.reranker` returns
``None`` and the read track skips the stage."""
