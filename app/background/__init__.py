"""The background track (seed 004): every job the Procrastinate worker runs, one module per job.

Where things go: a job is one module here holding its task name, queue and lock, the task (``@app.task`` /
``@app.periodic`` on ``app.worker.app.app``) and, for a job a producer queues, a typed
``defer_<job>(conn, *, vault_id, ...)`` that defers it on the producer's open transaction (the write track imports
``graph_build.defer_graph_build``, the session track ``prefetch.defer_prefetch``). ``jobs`` imports every module of
this package, and the worker imports ``jobs``: adding a job is adding its module. The work a job does may live
with the track it serves (``app.write.graph``, ``app.read.lexeme_stats``, ``app.read.rail2``,
``app.db.ann_index``) or here (``centrality``, ``dream``). Jobs reach the shared services through
``app.worker.context.get_services`` (bound by the runner; Procrastinate 3.10 has no per-job context we could use
without changing every task's signature). ``api`` and ``commands`` hold the dream's routes and CLI.
"""
