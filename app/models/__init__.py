"""The model layer: embedders, rerankers and LLMs behind three small protocols (:mod:`app.models.base`),
chosen in settings by :mod:`app.models.registry`, with one circuit breaker utility (:mod:`app.models.breaker`)
and named, versioned LLM tasks (:mod:`app.models.tasks`). Importing this package imports no ML runtime."""
