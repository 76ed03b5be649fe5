"""The REST API: ``app`` (the Litestar factory; it mounts every controller by plain import), ``errors`` (typed
errors to HTTP, in one place), ``health``, ``vaults``, ``browse``, ``pagination``. A feature's controller lives
with its feature (``app/write/api.py``, ``app/read/api.py``, ``app/background/api.py``) and is one import and one
entry in ``app.api.app.CONTROLLERS``."""
