"""Embedder backends. Each module imports its runtime lazily; pick one with
:meth:`app.models.registry.ModelCache.embedder`. See DESIGN.md section 4 for the measured numbers."""
