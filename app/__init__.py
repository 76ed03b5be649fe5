"""memvault: long-term memory for AI agents, with PostgreSQL doing the heavy lifting."""

import os as _os

# One BLAS thread per process unless the operator says otherwise: the embedders run many small matrix products,
# where OpenBLAS's thread start-up costs more than it saves (USE query embedding: 23 ms -> 6 ms on 2 cores).
# It must be set before numpy loads, hence here, at the package's first import.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    _os.environ.setdefault(_var, "1")

__version__ = "0.1.0"
