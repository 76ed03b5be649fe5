"""Tunables are data: every ScoringConfig / SearchConfig field is a key the SQL functions read, and back."""

from __future__ import annotations

import re

from app.db.migrate import SQL_DIR
from app.read.config import PROFILES, ScoringConfig, SearchConfig


def _keys(path: str) -> set[str]:
    text = (SQL_DIR / "idempotent" / path).read_text()
    return set(re.findall(r"p_cfg\s*->>?\s*'(\w+)'", text))


def test_scoring_config_matches_sql() -> None:
    assert set(ScoringConfig().params()) == _keys("070-scoring.sql")


def test_search_config_matches_sql() -> None:
    # noise_tags comes from the ScoringConfig (one NoiseFilter list for both functions), the second rail's query
    # vector and model from app/read/rail2.py, the vault's block count from FastSearch's cache of it
    assert _keys("060-read.sql") == set(SearchConfig().params(True)) | {"noise_tags", "qvec2", "rail2_model", "qvec_focus",
                                                                       "vault_blocks"}
    assert "exact" not in SearchConfig().params(None)


def test_every_intent_has_a_profile() -> None:
    assert set(PROFILES) == {"entity_lookup", "factual", "conceptual", "exploratory", "cross_domain", "unknown"}
