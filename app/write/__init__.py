"""The write track (seeds 001-002): ``pipeline`` (WriteTrack: normalize, gates, embed, dedup, persist, in that
order, one transaction), ``sessions`` (SessionTrack: turns, chunks, close), ``items`` (what enters and what it
answers; ``embedding_text``, the one definition of the text a block is embedded from), ``normalize/``, ``gates/``
(with ``app/safety``), ``dedup``, ``graph`` (GraphBuild, run by ``app/background/graph_build``), ``api``
(controllers). Built once per ``Services`` (``services.write``, ``services.sessions``)."""
