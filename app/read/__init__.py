"""The read track (seed 000): ``recall(services, vault, query, RecallOptions(...)) -> RecallResult``.

One module per stage: ``classify`` (QueryClassify), ``router`` (PersonalizedRouter), ``search`` (fast search +
the 11 scoring stages, in SQL), ``rerank`` (AttentionGate, circuit breaker, blending), ``funnel`` (seed 003's
selection funnel, multi-query), ``cascade`` (CascadeRecall, PPR), ``crag`` (CragEvaluator), ``sanitize``
(ReadSanitizer), ``formatter`` (OutputFormatter), ``prefetch`` (SlowThinker), ``recall`` (the pipeline),
``api`` (RecallController), ``jobs`` (the prefetch task), ``config`` (every tunable, as data).
"""
