"""The scoring stages' SQL helpers, table-driven: (expression, expected) with the seed's formulas."""

from __future__ import annotations

import math

import psycopg
import pytest

LN2 = math.log(2)
WEEK_SPAN = "'[{\"kind\": \"date\", \"value\": \"2023-W22\", \"surface\": \"last week\"}]'"
CASES = [
    # 1. RecencyBoost x (1 + 0.15 e^(-age/14))
    ("memvault.recency_boost_v1(0)", 1.15),
    ("memvault.recency_boost_v1(14)", 1 + 0.15 * math.exp(-1)),
    ("memvault.recency_boost_v1(-5)", 1.15),  # a future valid_at counts as age 0
    ("memvault.recency_boost_v1(1e9)", 1.0),  # no underflow error
    # 2. ImportanceWeight x (0.7 + 0.3 conf)
    ("memvault.importance_weight_v1(1)", 1.0),
    ("memvault.importance_weight_v1(0.5)", 0.85),
    # 3. TrustBoost x (1 - 0.3 (1 - trust))
    ("memvault.trust_boost_v1(0.2)", 0.76),
    # 4. FeedbackBoost x (1 + 0.15 tanh(net / 3))
    ("memvault.feedback_boost_v1(6, 0)", 1 + 0.15 * math.tanh(2)),
    ("memvault.feedback_boost_v1(0, 3)", 1 - 0.15 * math.tanh(1)),
    # 5. LengthNorm / (1 + 0.3 |log2(len / 500)|)
    ("memvault.length_norm_v1(500)", 1.0),
    ("memvault.length_norm_v1(2000)", 1 / 1.6),
    ("memvault.length_norm_v1(125)", 1 / 1.6),
    # 6. WeibullDecay: half-lives by confidence, stretched by access_count up to 10x
    ("memvault.weibull_half_life_v1(0.95, 0)", 180.0),
    ("memvault.weibull_half_life_v1(0.8, 0)", 60.0),
    ("memvault.weibull_half_life_v1(0.5, 0)", 30.0),
    ("memvault.weibull_half_life_v1(0.1, 0)", 14.0),
    ("memvault.weibull_half_life_v1(0.1, 1)", 28.0),
    ("memvault.weibull_half_life_v1(0.1, 100000)", 140.0),  # capped at 10x
    ("memvault.weibull_decay_v1(30, 30, 1.5, 1.0)", 0.5),  # S(half-life) = 0.5
    ("memvault.weibull_decay_v1(30, 30)", 0.85),  # default weight 0.3: 1 - 0.3 * 0.5
    ("memvault.weibull_decay_v1(0, 30)", 1.0),
    ("memvault.weibull_decay_v1(1e6, 14)", 0.7),  # the steady tail, no underflow
    # 7. PPRBoost x (1 + 0.3 ppr); 8. SemanticBoost x (1 + 0.3 cos)
    ("memvault.ppr_boost_v1(0.5)", 1.15),
    ("memvault.ppr_boost_v1(7)", 1.3),
    ("memvault.semantic_boost_v1(0.8)", 1.24),
    ("memvault.semantic_boost_v1(-0.2)", 1.0),
    ("memvault.query_key_v1('  What''s the OCR status?? ')", "what s the ocr status"),
    # the span a normalized date names (write track's values), and stage 1's distance to a question's window
    ("memvault.iso_span_v1('2023-05-07')::text", '["2023-05-07 00:00:00+00","2023-05-08 00:00:00+00")'),
    ("memvault.iso_span_v1('2023-05-07T13:56')::text", '["2023-05-07 00:00:00+00","2023-05-08 00:00:00+00")'),
    ("memvault.iso_span_v1('2023-W18')::text", '["2023-05-01 00:00:00+00","2023-05-08 00:00:00+00")'),
    ("memvault.iso_span_v1('2023-05')::text", '["2023-05-01 00:00:00+00","2023-06-01 00:00:00+00")'),
    ("memvault.iso_span_v1('2022')::text", '["2022-01-01 00:00:00+00","2023-01-01 00:00:00+00")'),
    ("memvault.iso_span_v1('PT2H') IS NULL", True),
    ("memvault.iso_span_v1('2023-13-01') IS NULL", True),
    # said 9 June, the window the week before it: 0 days by what it names ("last week" -> 2023-W22), else 1
    (f"memvault.window_days_v1('2023-06-09', {WEEK_SPAN}, '2023-06-02', '2023-06-09')", 0.0),
    ("memvault.window_days_v1('2023-06-10', '[]', '2023-06-02', '2023-06-09')", 1.0),
    # a named year is coarser than the window and a week: it does not put the memory inside
    ("memvault.window_days_v1('2023-06-20', '[{\"kind\": \"date\", \"value\": \"2023\"}]', "
     "'2023-06-02', '2023-06-09')", 11.0),
    ("memvault.window_days_v1('2023-06-20', '{}', '2023-06-02', '2023-06-09')", 11.0),  # no spans array
]


@pytest.fixture
def conn(db_url: str):
    with psycopg.connect(db_url, autocommit=True) as c:
        yield c


def test_stage_helpers(conn) -> None:
    for expr, expected in CASES:
        got = conn.execute(f"SELECT {expr}").fetchone()[0]
        if isinstance(expected, float) and not isinstance(expected, bool):
            assert got == pytest.approx(expected, rel=1e-6), expr
        else:
            assert got == expected, expr


def test_helpers_are_inlinable(conn) -> None:
    """Per-row helpers: SQL, immutable, no SET clause (so the planner can inline them)."""
    rows = conn.execute("""
        SELECT p.proname, p.provolatile, p.proconfig, l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
        WHERE p.pronamespace = 'memvault'::regnamespace AND p.proname ~ '_(boost|weight|norm|decay|half_life)_v1$'
    """).fetchall()
    assert len(rows) == 9
    assert all(r[1] == "i" and r[2] is None and r[3] == "sql" for r in rows), rows


def test_every_read_function_pins_search_path(conn) -> None:
    rows = conn.execute("""
        SELECT p.proname FROM pg_proc p
        WHERE p.pronamespace = 'memvault'::regnamespace AND p.prokind = 'f' AND p.proconfig IS NULL
          AND p.proname IN ('fast_search_v1', 'fast_search_v2', '_sparse_side_v1', 'recall_fast_v4',
                            'sparse_ahead_v2',
                            'score_candidates_v2', 'recall_fast_v2', 'record_recall_v1',
                            'graph_expand_v1', 'cascade_seed_entities_v1', 'lexeme_stats_v1', 'sparse_plan_v1',
                            'sparse_plan_v3', 'sparse_plan_v4',
                            'prefetch_put_v1', 'prefetch_get_v1', 'intent_distribution_v1')
    """).fetchall()
    assert rows == []
