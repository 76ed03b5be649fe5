"""WAL positions as the X-Memvault-LSN header carries them, and MEMVAULT_REPLICA_URLS as a user writes it."""

from __future__ import annotations

import pytest

from app.db.replicas import format_lsn, parse_lsn
from app.errors import InvalidInput
from app.settings import Settings


@pytest.mark.parametrize(("text", "value"), [
    ("0/0", 0), ("0/3000148", 0x3000148), ("16/B374D848", (0x16 << 32) | 0xB374D848),
    ("FFFFFFFF/FFFFFFFF", 2**64 - 1), (" 1/a ", (1 << 32) | 10)])
def test_lsn_round_trip(text: str, value: int) -> None:
    assert parse_lsn(text) == value
    assert parse_lsn(format_lsn(value)) == value


@pytest.mark.parametrize("bad", ["", "0", "0/", "/1", "1/2/3", "G/0", "0/123456789", "-1/0", "0x1/0", "１/0"])
def test_a_bad_lsn_is_invalid_input(bad: str) -> None:
    with pytest.raises(InvalidInput, match="X-Memvault-LSN"):
        parse_lsn(bad)


@pytest.mark.parametrize(("env", "urls"), [
    ("", []),
    ("postgresql://a:5433/m", ["postgresql://a:5433/m"]),
    ("postgresql://a/m, postgresql://b/m", ["postgresql://a/m", "postgresql://b/m"]),
    ("postgresql://a/m postgresql://b/m", ["postgresql://a/m", "postgresql://b/m"]),
    ('["postgresql://a/m", "host=b dbname=m"]', ["postgresql://a/m", "host=b dbname=m"]),
])
def test_replica_urls_from_the_environment(monkeypatch, env: str, urls: list[str]) -> None:
    monkeypatch.setenv("MEMVAULT_REPLICA_URLS", env)
    assert Settings().replica_urls == urls
