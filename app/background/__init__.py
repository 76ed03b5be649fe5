"""The background track (seed 004): every job the Procrastinate worker runs, one module per job.

Where things go: a job is one module here holding the task (``@app.task`` / ``@app.periodic`` on
``app.worker.app.app``); a job a producer queues has its name, queue and lock, and a typed
``defer_<job>(conn, *, vault_id, ...)`` that defers it on the producer's open transaction, in the catalogue
``app.worker.catalogue`` (the write track imports ``defer_graph_build``, the session track ``defer_prefetch``: a
producer never imports a job's module, which reaches the worker's services). ``jobs`` imports every module of
this package, and the worker imports ``jobs``: adding a job is adding its module. The work a job does may live
with the track it serves (``app.write.graph``, ``app.read.lexeme_stats``, ``app.read.rail2``,
``app.db.ann_index``) or here (``centrality``, ``dream``). Jobs receive the worker's services explicitly:
every task takes Procrastinate's job context (``pass_context=True``) and reads ``app.worker.context.services_of``
(the runner builds the worker with ``additional_context=worker_context(services)``). ``api`` and ``commands`` hold the dream's routes and CLI.
"""
