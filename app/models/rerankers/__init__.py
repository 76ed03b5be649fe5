"""Reranker backends: ``http`` (a /v1/rerank server), ``mlx`` (a local cross-encoder), ``fitgate`` (the LLM
keep/drop gate of seed 003). ``none`` is no object at all: :func:`app.models.registry.get_reranker` returns
``None`` and the read track skips the stage."""
