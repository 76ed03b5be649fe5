"""The Procrastinate app (``app``: the job queue in the same database) and ``defer_in``, the primitive the
``defer_<job>`` functions of ``app/background/`` build on; ``context`` binds the running service's objects for
the jobs. The jobs themselves live in ``app/background/``, one module each."""
