"""Stage 1 with a question's timeframe, made cheap (issue 33): score_candidates_v2 asks the inlinable
window_gap_days_v1 for a memory whose norm_spans name nothing, and for one that names something writes out
window_days_v1's body (its sub-select a sub-plan of the scoring query: no call of the non-inlinable function, whose
executor start and end cost ~50 us a memory; docs/recall-cpu.md round 5); window_days_v1 evaluates each named date
once (OFFSET 0). The same numbers as before, to the bit: checked here against the previous definitions, kept
verbatim in pg_temp."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import psycopg
from pgvector import Vector

from app.read.config import ScoringConfig
from tests.integration.read_helpers import Mem, put_blocks

# memvault.window_days_v1 as it was before (main aab27fd), verbatim but for its name.
OLD_WINDOW_DAYS = """
CREATE FUNCTION pg_temp.window_days_old(p_valid_at timestamptz, p_spans jsonb, p_start timestamptz,
                                        p_end timestamptz)
    RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN least(
        greatest(extract(epoch FROM p_start - p_valid_at), extract(epoch FROM p_valid_at - p_end), 0) / 86400.0,
        (SELECT min(greatest(extract(epoch FROM p_start - upper(r)), extract(epoch FROM lower(r) - p_end), 0))
                / 86400.0
           FROM (SELECT memvault.iso_span_v1(sp ->> 'value') AS r
                   FROM jsonb_array_elements(CASE jsonb_typeof(p_spans) WHEN 'array' THEN p_spans
                                                 ELSE '[]'::jsonb END) AS sp
                  WHERE sp ->> 'kind' IN ('date', 'datetime')) AS named
          WHERE r IS NOT NULL
            AND upper(r) - lower(r) <= greatest(p_end - p_start, interval '7 days')))
"""
# score_candidates_v2's timeframe column now: window_days_v1's body written out where a date may be named.
NEW_WIN = """CASE WHEN cfg.window_start IS NULL THEN NULL
                    WHEN jsonb_array_length(CASE jsonb_typeof(v.norm_spans) WHEN 'array' THEN v.norm_spans
                                                ELSE '[]'::jsonb END) > 0
                    THEN least(
                        memvault.window_gap_days_v1(v.valid_at, cfg.window_start, cfg.window_end),
                        (SELECT min(greatest(extract(epoch FROM cfg.window_start - upper(r)),
                                             extract(epoch FROM lower(r) - cfg.window_end), 0)) / 86400.0
                           FROM (SELECT memvault.iso_span_v1(sp ->> 'value') AS r
                                   FROM jsonb_array_elements(v.norm_spans) AS sp  -- an array here (the WHEN above)
                                  WHERE sp ->> 'kind' IN ('date', 'datetime')
                                 OFFSET 0) AS named  -- each named date read once (window_days_v1's comment)
                          WHERE r IS NOT NULL
                            AND upper(r) - lower(r) <= greatest(cfg.window_end - cfg.window_start,
                                                                interval '7 days')))
                    ELSE memvault.window_gap_days_v1(v.valid_at, cfg.window_start, cfg.window_end)
               END AS win_days"""
# ... as it was at main e0806de: window_days_v1 called where a date may be named.
CALLED_WIN = """CASE WHEN cfg.window_start IS NULL THEN NULL  -- window_days_v1 only where a date may be named
                    WHEN jsonb_array_length(CASE jsonb_typeof(v.norm_spans) WHEN 'array' THEN v.norm_spans
                                                ELSE '[]'::jsonb END) > 0
                    THEN memvault.window_days_v1(v.valid_at, v.norm_spans, cfg.window_start, cfg.window_end)
                    ELSE memvault.window_gap_days_v1(v.valid_at, cfg.window_start, cfg.window_end)
               END AS win_days"""
# score_candidates_v2's last statement now (the best p_limit, then their columns) and as it was at main e0806de.
NEW_FINAL = """    -- the best p_limit first, then their columns: the factors' json and the text to show built for those rows
    -- only, not for every candidate before the sort (which also carried them: ~0.1 ms a recall, round 5 of docs/recall-cpu.md)
    FROM (SELECT f.* FROM final f, cfg WHERE f.s11 >= cfg.min_score ORDER BY f.s11 DESC, f.id LIMIT p_limit) f
    ORDER BY f.s11 DESC, f.id;"""
OLD_FINAL = """    FROM final f, cfg
    WHERE f.s11 >= cfg.min_score
    ORDER BY f.s11 DESC, f.id
    LIMIT p_limit;"""
# ... and at main aab27fd: the old window_days for every candidate.
OLD_WIN = """CASE WHEN cfg.window_start IS NOT NULL
                    THEN pg_temp.window_days_old(v.valid_at, v.norm_spans, cfg.window_start, cfg.window_end)
               END AS win_days"""

SPANS = [
    [],
    [{"kind": "date", "value": "2023-06-02"}],
    [{"kind": "datetime", "value": "2023-06-08T18:30"}],
    [{"kind": "date", "value": "2023-W22"}, {"kind": "duration", "value": "PT1H"}],
    [{"kind": "date", "value": "2023-05"}],
    [{"kind": "date", "value": "2019"}],
    [{"kind": "date", "value": "not a date"}, {"kind": "date", "value": "2023-06-30"}],
    [{"kind": "proportion", "value": 0.5}],
    [{"kind": "date", "value": "2023-13-01"}, {"kind": "date", "value": "2023-06-04"},
     {"kind": "datetime", "value": "2023-07-01T09:00"}],
    {"kind": "date", "value": "2023-06-02"},  # not an array: names nothing
]
WINDOWS = [("2023-06-01", "2023-06-08"), ("2023-06-05", "2023-06-06"), ("2023-05-01", "2023-06-01"),
           ("2019-01-01", "2020-01-01"), ("2022-01-01", "2024-01-01"), ("2023-07-01", "2023-07-02")]
NOW = datetime(2023, 7, 30, tzinfo=UTC)


async def _vault_with_spans(services, vault) -> list[int]:
    mems = [Mem(f"Caroline went to the support group, note {i}", days_ago=3 * i + 0.5,
                session_id=f"s{i % 3}") for i in range(len(SPANS) * 2)]
    ids = await put_blocks(services, vault, mems, now=NOW)
    async with services.db.transaction(vault.id) as conn:
        for i, bid in enumerate(ids):
            await conn.execute("UPDATE memvault.block SET norm_spans = %s::jsonb WHERE id = %s",
                               (json.dumps(SPANS[i % len(SPANS)]), bid))
    return ids


async def test_window_days_gives_what_it_gave(services, vault, db_url: str) -> None:
    ids = await _vault_with_spans(services, vault)
    with psycopg.connect(db_url) as conn:
        conn.execute(OLD_WINDOW_DAYS)
        rows = conn.execute(
            "SELECT b.id, jsonb_array_length(CASE jsonb_typeof(b.norm_spans) WHEN 'array' THEN b.norm_spans "
            "ELSE '[]' END) AS n, memvault.window_days_v1(b.valid_at, b.norm_spans, w.s, w.e) AS new, "
            "pg_temp.window_days_old(b.valid_at, b.norm_spans, w.s, w.e) AS old, "
            "memvault.window_gap_days_v1(b.valid_at, w.s, w.e) AS gap "
            "FROM memvault.block b, unnest(%s::timestamptz[], %s::timestamptz[]) AS w(s, e) "
            "WHERE b.vault_id = %s ORDER BY b.id, w.s",
            ([s for s, _ in WINDOWS], [e for _, e in WINDOWS], vault.id)).fetchall()
    assert len(rows) == len(ids) * len(WINDOWS)
    assert all(new == old for _, _, new, old, _ in rows)
    assert all(gap == old for _, n, _, old, gap in rows if n == 0)  # nothing named: the gap alone
    assert any(new < gap for _, n, new, _, gap in rows if n > 0)  # a named date brings some nearer


async def test_scoring_with_a_timeframe_is_unchanged_and_calls_no_window_function(services, vault,
                                                                                    db_url: str) -> None:
    ids = await _vault_with_spans(services, vault)
    qvec = services.embedder.embed_query("When did Caroline go to the support group?")
    with psycopg.connect(db_url) as conn:
        conn.execute(OLD_WINDOW_DAYS)
        src = conn.execute("SELECT pg_get_functiondef('memvault.score_candidates_v2(bigint[], double precision[], "
                           "vector, timestamptz, timestamptz, jsonb, integer)'::regprocedure)").fetchone()[0]
        assert NEW_WIN in src and NEW_FINAL in src, "score_candidates_v2 changed: update this test's copies"
        conn.execute(src.replace("memvault.score_candidates_v2(", "pg_temp.score_old(", 1).replace(NEW_WIN, OLD_WIN))
        conn.execute(src.replace("memvault.score_candidates_v2(", "pg_temp.score_called(", 1)  # = main e0806de's
                     .replace(NEW_WIN, CALLED_WIN).replace(NEW_FINAL, OLD_FINAL))
        conn.execute("SET track_functions = 'all'")
        conn.execute("SELECT set_config('memvault.vault_id', %s, false)", (str(vault.id),))
        named = conn.execute("SELECT count(*) FROM memvault.block WHERE vault_id = %s AND jsonb_array_length("
                             "CASE jsonb_typeof(norm_spans) WHEN 'array' THEN norm_spans ELSE '[]' END) > 0",
                             (vault.id,)).fetchone()[0]
        assert 0 < named < len(ids)
        for start, end in WINDOWS + [(None, None)]:
            cfg = {**ScoringConfig().params(), "window_start": start, "window_end": end, "min_score": 0}
            args = (ids, [1.0 - i / 100 for i in range(len(ids))], Vector(qvec).to_text(), NOW, json.dumps(cfg))
            calls = conn.execute("SELECT coalesce(pg_stat_get_xact_function_calls("
                                 "'memvault.window_days_v1'::regproc), 0)").fetchone()[0]
            new = conn.execute("SELECT * FROM memvault.score_candidates_v2(%s::bigint[], %s::float8[], %s::vector, "
                               "%s, NULL, %s::jsonb, 100)", args).fetchall()
            after = conn.execute("SELECT coalesce(pg_stat_get_xact_function_calls("
                                 "'memvault.window_days_v1'::regproc), 0)").fetchone()[0]
            old = conn.execute("SELECT * FROM pg_temp.score_old(%s::bigint[], %s::float8[], %s::vector, %s, NULL, "
                               "%s::jsonb, 100)", args).fetchall()
            called = conn.execute("SELECT * FROM pg_temp.score_called(%s::bigint[], %s::float8[], %s::vector, %s, "
                                  "NULL, %s::jsonb, 100)", args).fetchall()
            through = conn.execute("SELECT coalesce(pg_stat_get_xact_function_calls("
                                   "'memvault.window_days_v1'::regproc), 0)").fetchone()[0]
            assert new == old == called and len(new) == len(ids), (start, end)
            assert after == calls, (start, end)  # window_days_v1 is not called: its body runs inside the query
            assert through - after == (named if start else 0), (start, end)  # e0806de's called it for these


def test_a_day_the_calendar_does_not_have_names_nothing(db_url: str) -> None:
    """norm_spans come from the write track's normalizer (real days only) but also from an imported export, which
    a person may have edited: "2023-02-30" must name nothing, not raise in the middle of a recall."""
    spans = ["2023-02-30", "2023-04-31T10:00", "0000-01-01", "2024-02-29", "2023-06-02"]
    with psycopg.connect(db_url) as conn:
        rows = conn.execute("SELECT v, memvault.iso_span_v1(v) IS NOT NULL FROM unnest(%s::text[]) v",
                            (spans,)).fetchall()
        days = conn.execute(
            "SELECT memvault.window_days_v1(%s, %s::jsonb, %s, %s)",
            (datetime(2023, 1, 1, tzinfo=UTC), json.dumps([{"kind": "date", "value": "2023-02-30"},
                                                            {"kind": "date", "value": "2023-06-02"}]),
             datetime(2023, 6, 1, tzinfo=UTC), datetime(2023, 6, 8, tzinfo=UTC))).fetchone()[0]
    assert dict(rows) == {"2023-02-30": False, "2023-04-31T10:00": False, "0000-01-01": False,
                          "2024-02-29": True, "2023-06-02": True}
    assert days == 0.0  # the real day in the window still counts; the impossible one is passed over


async def test_scoring_keeps_its_best_rows_and_order_at_any_limit(services, vault, db_url: str) -> None:
    """The last statement takes the best p_limit before building their columns: the same rows, values and order as
    main e0806de's (which built them for every candidate), at any limit, minimum score and dedup window."""
    ids = await _vault_with_spans(services, vault)
    qvec = services.embedder.embed_query("Where did Caroline go, and when?")
    with psycopg.connect(db_url) as conn:
        src = conn.execute("SELECT pg_get_functiondef('memvault.score_candidates_v2(bigint[], double precision[], "
                           "vector, timestamptz, timestamptz, jsonb, integer)'::regprocedure)").fetchone()[0]
        assert NEW_WIN in src and NEW_FINAL in src, "score_candidates_v2 changed: update this test's copies"
        conn.execute(src.replace("memvault.score_candidates_v2(", "pg_temp.score_called(", 1)
                     .replace(NEW_WIN, CALLED_WIN).replace(NEW_FINAL, OLD_FINAL))
        conn.execute("SELECT set_config('memvault.vault_id', %s, false)", (str(vault.id),))
        seen = set()
        for limit in (1, 3, 7, 100):
            for min_score in (0, 0.2, 0.45, 5):
                for cfg in ({}, {"dedup_cos": 0.3, "dedup_window": 5}, {"window_start": "2023-06-01",
                                                                         "window_end": "2023-06-08"}):
                    cfg = {**ScoringConfig().params(), **cfg, "min_score": min_score}
                    args = (ids, [1.0 - (i * 7 % 11) / 20 for i in range(len(ids))], Vector(qvec).to_text(), NOW,
                            json.dumps(cfg), limit)
                    new = conn.execute("SELECT * FROM memvault.score_candidates_v2(%s::bigint[], %s::float8[], "
                                       "%s::vector, %s, NULL, %s::jsonb, %s)", args).fetchall()
                    old = conn.execute("SELECT * FROM pg_temp.score_called(%s::bigint[], %s::float8[], %s::vector, "
                                       "%s, NULL, %s::jsonb, %s)", args).fetchall()
                    assert new == old, (limit, min_score, cfg)
                    seen.add(len(new))
        assert 0 in seen and 1 in seen and max(seen) > 7  # the limit and the gate both cut somewhere
