"""The embedded cluster's memory settings (app/db/cluster.py)."""

from __future__ import annotations

from app.db.cluster import SERVER_CONFIG, shared_buffers_mb

GB = 1 << 30


def test_shared_buffers_are_a_quarter_of_memory_within_bounds() -> None:
    assert shared_buffers_mb(23 * GB) == 5888
    assert shared_buffers_mb(8 * GB) == 2048
    assert shared_buffers_mb(256 << 20) == 128  # never under 128 MB
    assert shared_buffers_mb(256 * GB) == 8192  # never over 8 GB
    assert SERVER_CONFIG["shared_buffers"] == f"'{shared_buffers_mb()}MB'"
