"""The read track (seed 000): ``recall(services, vault, query, RecallOptions(...)) -> RecallResult``.

Where things go: ``recall`` (ReadTrack: validation, the recall's context, sanitize + format, recall_log),
``context`` (the frozen RecallContext and the Stage protocol ``async (ctx, candidates) -> candidates``),
``pipeline`` (the runner: timing, events, transactions), ``config`` (every tunable as data, and the fast and slow
recipes: which stages run, in which order). One module per stage: ``search`` (FastSearch: fast search + the 11
scoring stages, in SQL), ``continuity`` (SessionContinuity), ``funnel`` (MultiQuery, SelectionFunnel), ``gap``
(KnowledgeGap), ``speaker`` (SpeakerMatch), ``cohesion`` (SessionCohesion), ``rerank`` (AttentionGate, circuit
breaker, blending), ``cascade`` (CascadeRecall, PPR), ``crag`` (CragEvaluator). Before the stages: ``classify``
(QueryClassify), ``router`` (PersonalizedRouter), ``timeframe`` (QueryTimeframe); after them: ``sanitize``
(ReadSanitizer), ``formatter`` (OutputFormatter). ``prefetch`` (SlowThinker, and PrefetchCache: the read track's
shortcut, wired by ``Services``), ``api`` (RecallController).

A new scoring stage: a module with a class that follows the Stage protocol (``ReadStage`` gives the defaults),
and its ``module:Class`` entry in a recipe of ``config``.
"""
