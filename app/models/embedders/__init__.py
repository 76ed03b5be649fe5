"""Embedder backends. Each module imports its runtime lazily; pick one with
:func:`app.models.registry.get_embedder`. See DESIGN.md section 4 for the measured numbers."""
