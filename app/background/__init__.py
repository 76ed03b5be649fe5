"""The background track's own work (seed 004), run by the Procrastinate worker: graph centrality so far."""
