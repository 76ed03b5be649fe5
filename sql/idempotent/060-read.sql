-- The read track's fast search: dense top-N (HNSW) + sparse top-N (tsvector, rare terms), fused by RRF.
-- Applied at head (app/db/migrate.py), after every table exists: bodies are checked at creation.
-- The functions a recall calls are plpgsql, not sql: a sql function with a SET clause is never inlined, and
-- PostgreSQL 17 plans its statement again at every call, where plpgsql keeps the plan for the session. At 100k
-- blocks that planning was a third of recall_fast_v1's time (p50 26 -> 18 ms as plpgsql).

-- Document frequency of lexemes in the vault in scope: freq (the share of its blocks holding the lexeme) and
-- est_rows (how many blocks hold it). From memvault.lexeme_stats once the vault has been counted
-- (refresh_lexeme_stats_v1; a lexeme first seen since then counts as half a block). Before that, estimated from
-- the planner's statistics of block.tsv, which are table-wide: ANALYZE keeps the most common lexemes and their
-- frequencies, and a lexeme not among them is rarer than the rarest one listed.
-- SECURITY DEFINER: pg_stats hides tables with row-level security from the vault role; the vault's own rows are
-- selected by memvault.current_vault_id() explicitly.
CREATE OR REPLACE FUNCTION memvault.lexeme_stats_v1(p_lexemes text[])
    RETURNS TABLE (lexeme text, freq double precision, est_rows double precision)
    LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL SAFE
    SET search_path = pg_catalog
    AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH counted AS (
        SELECT st.blocks FROM memvault.lexeme_stats_state st WHERE st.vault_id = memvault.current_vault_id()
    ), s AS (  -- pg_statistic's MCELEM slot (kind 4) of block.tsv: elements, then their frequencies + min/max
        SELECT (CASE 4 WHEN st.stakind1 THEN st.stavalues1 WHEN st.stakind2 THEN st.stavalues2
                       WHEN st.stakind3 THEN st.stavalues3 WHEN st.stakind4 THEN st.stavalues4
                       WHEN st.stakind5 THEN st.stavalues5 END)::text::text[] AS elems,
               CASE 4 WHEN st.stakind1 THEN st.stanumbers1 WHEN st.stakind2 THEN st.stanumbers2
                      WHEN st.stakind3 THEN st.stanumbers3 WHEN st.stakind4 THEN st.stanumbers4
                      WHEN st.stakind5 THEN st.stanumbers5 END AS freqs
        FROM pg_catalog.pg_statistic st
        JOIN pg_catalog.pg_attribute a ON a.attrelid = st.starelid AND a.attnum = st.staattnum
        WHERE st.starelid = 'memvault.block'::regclass AND a.attname = 'tsv' AND NOT st.stainherit
    ), lo AS (
        SELECT coalesce((SELECT s.freqs[cardinality(s.elems) + 1] / 2 FROM s), 0.0005)::double precision AS f,
               (SELECT s.elems FROM s) AS elems, (SELECT s.freqs FROM s) AS freqs
    ), n AS (
        SELECT greatest(c.reltuples, 0)::double precision AS nrows FROM pg_catalog.pg_class c
        WHERE c.oid = 'memvault.block'::regclass
    )
    SELECT l.lexeme, greatest(coalesce(x.ndoc, 0), 0.5) / greatest(counted.blocks, 1)::double precision,
           greatest(coalesce(x.ndoc, 0), 0.5)::double precision
    FROM counted CROSS JOIN unnest(p_lexemes) AS l(lexeme)
    LEFT JOIN memvault.lexeme_stats x ON x.vault_id = memvault.current_vault_id() AND x.lexeme = l.lexeme
    UNION ALL
    SELECT l.lexeme, coalesce(lo.freqs[array_position(lo.elems, l.lexeme)]::double precision, lo.f),
           coalesce(lo.freqs[array_position(lo.elems, l.lexeme)]::double precision, lo.f) * n.nrows
    FROM unnest(p_lexemes) AS l(lexeme)
    CROSS JOIN lo CROSS JOIN n
    WHERE NOT EXISTS (SELECT 1 FROM counted);
END
$$;
REVOKE ALL ON FUNCTION memvault.lexeme_stats_v1(text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memvault.lexeme_stats_v1(text[]) TO memvault_app;

-- Count the lexemes of a vault's blocks into memvault.lexeme_stats (all of its blocks, current or not: the
-- sparse rail's index scan reads them all), and their sum (postings: the blocks' lengths in distinct lexemes,
-- summed, from which BM25 takes the mean block length). 0.6 s for 100,000 blocks. Returns the number of lexemes.
CREATE OR REPLACE FUNCTION memvault.refresh_lexeme_stats_v1(p_vault uuid DEFAULT NULL)
    RETURNS integer
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    v_vault  uuid := coalesce(p_vault, memvault.current_vault_id());
    v_blocks integer;
    v_n      integer;
BEGIN
    IF v_vault IS NULL THEN
        RAISE EXCEPTION 'refresh_lexeme_stats_v1 needs a vault (argument or in scope)' USING ERRCODE = 'MV422';
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('memvault.lexeme_stats'), hashtext(v_vault::text));
    SELECT count(*)::integer INTO v_blocks FROM memvault.block b WHERE b.vault_id = v_vault;
    DELETE FROM memvault.lexeme_stats s WHERE s.vault_id = v_vault;
    INSERT INTO memvault.lexeme_stats (vault_id, lexeme, ndoc)
    SELECT v_vault, t.word, t.ndoc
    FROM ts_stat(format('SELECT b.tsv FROM memvault.block b WHERE b.vault_id = %L', v_vault)) AS t;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    INSERT INTO memvault.lexeme_stats_state AS st (vault_id, blocks, lexemes, refreshed_at, postings)
    VALUES (v_vault, v_blocks, v_n, now(),
            (SELECT coalesce(sum(s.ndoc), 0) FROM memvault.lexeme_stats s WHERE s.vault_id = v_vault))
    ON CONFLICT (vault_id) DO UPDATE
        SET blocks = excluded.blocks, lexemes = excluded.lexemes, refreshed_at = excluded.refreshed_at,
            postings = excluded.postings;
    RETURN v_n;
END
$$;

-- The vaults whose lexeme_stats are due: at least p_min_blocks blocks and never counted, or their block count
-- moved by more than p_change (a share) since. Across all vaults (the background job's view).
CREATE OR REPLACE FUNCTION memvault.lexeme_stats_due_v1(p_min_blocks integer DEFAULT 20,
                                                        p_change double precision DEFAULT 0.1)
    RETURNS TABLE (vault_id uuid, blocks bigint, counted integer)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT c.vault_id, c.blocks, st.blocks
    FROM (SELECT b.vault_id, count(*) AS blocks FROM memvault.block b GROUP BY b.vault_id) c
    LEFT JOIN memvault.lexeme_stats_state st ON st.vault_id = c.vault_id
    WHERE c.blocks >= p_min_blocks
      AND (st.vault_id IS NULL OR abs(c.blocks - st.blocks) > p_change * greatest(st.blocks, 1))
    ORDER BY c.blocks DESC
$$;

-- The sparse rail's plan. Query lexemes no more frequent than p_max_freq (the rarest one always), rarest first,
-- at most p_max_terms, each with its idf = ln(1 / freq). A row that holds only one common word scores below
-- every row holding a rarer word or two of the words, so the first pass reads only those:
--   single: the rarest terms while their estimated rows stay within p_single_budget (the first always);
--   pair:   the other terms, matched two at a time ((a & b): GIN intersects their lists without reading rows),
--           the rarest of them while their estimated rows stay within p_pair_budget. The pairs are written
--           factored, a & (b | c | d) | b & (c | d) | c & d: the same matches as (a & b) | (a & c) | ..., and
--           the same ts_rank (it reads the query's distinct words and whether its top operator is & or |),
--           but GIN tests each posting against 3 branches instead of 6 pairs (at a million blocks the
--           sparse rail's scan p95 32 -> 26 ms, its top 50 the same on all 200 bench questions).
-- When the first pass finds fewer rows than the rail needs, the fill pass adds the common terms alone while
-- the estimated rows of singles and fills stay within p_row_budget.
-- p_pair_budget bounds the first pass's work in a large vault: GIN reads every pair term's whole posting list
-- and tests the query on each entry, then every match is scored. At a million blocks nearly every term is
-- "not single", and a question of eight words ORed 21 pairs over ~170,000 postings (125 ms). With p_max_terms 8
-- and p_max_freq 0.1, a vault of at most 100,000 blocks never reaches 70,000 (seven pair terms of at most
-- 10,000 rows each): its plan is sparse_plan_v1's (that one is this with no pair budget).
-- Returns one row: the terms and their idf (every row is scored by all of them, pair terms or not), the first
-- pass's query and the fill pass's (NULL when it would match nothing more).
CREATE OR REPLACE FUNCTION memvault.sparse_plan_v3(p_query text, p_max_terms integer DEFAULT 8,
                                                   p_single_budget double precision DEFAULT 1000,
                                                   p_row_budget double precision DEFAULT 4000,
                                                   p_max_freq double precision DEFAULT 0.1,
                                                   p_pair_budget double precision DEFAULT 70000)
    RETURNS TABLE (terms tsquery[], idf double precision[], first_pass tsquery, fill_pass tsquery)
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = memvault, pg_catalog
    AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH s AS (
        SELECT st.lexeme, st.freq, st.est_rows, row_number() OVER (ORDER BY st.freq, st.lexeme) AS rarity
        FROM memvault.lexeme_stats_v1(tsvector_to_array(memvault.sparse_document_v1(p_query))) AS st
    ), t AS (
        SELECT s.lexeme, s.freq, s.est_rows, quote_literal(s.lexeme) AS lit,
               row_number() OVER w AS rn, sum(s.est_rows) OVER w AS cum_rows
        FROM s WHERE s.rarity = 1 OR s.freq <= p_max_freq
        WINDOW w AS (ORDER BY s.freq, s.lexeme)
    ), k AS (
        SELECT t.*, (t.rn = 1 OR t.cum_rows <= p_single_budget) AS single, t.cum_rows <= p_row_budget AS fill
        FROM t WHERE t.rn <= p_max_terms
    ), kp AS (
        SELECT k.*, sum(CASE WHEN k.single THEN 0 ELSE k.est_rows END) OVER (ORDER BY k.rn) <= p_pair_budget AS pair
        FROM k
    ), parts AS (
        SELECT kp.lit AS part, kp.rn FROM kp WHERE kp.single
        UNION ALL
        SELECT format('%s & (%s)', a.lit, string_agg(b.lit, ' | ' ORDER BY b.rn)), a.rn
        FROM kp a JOIN kp b ON a.rn < b.rn
        WHERE NOT a.single AND NOT b.single AND a.pair AND b.pair
        GROUP BY a.lit, a.rn
    ), first AS (
        SELECT string_agg(parts.part, ' | ' ORDER BY parts.rn) AS q FROM parts
    )
    SELECT (SELECT array_agg(k.lit::tsquery ORDER BY k.rn) FROM k),
           (SELECT array_agg(ln(1.0 / greatest(k.freq, 1e-9)) ORDER BY k.rn) FROM k),
           first.q::tsquery,
           (SELECT first.q || ' | ' || string_agg(k.lit, ' | ') FROM k WHERE NOT k.single AND k.fill)::tsquery
    FROM first
    WHERE EXISTS (SELECT 1 FROM k);
END
$$;

-- sparse_plan_v3 without a pair budget: every "not single" term in the pairs (the plan before the budget; the
-- reference the budget's cost in quality is measured against).
CREATE OR REPLACE FUNCTION memvault.sparse_plan_v1(p_query text, p_max_terms integer DEFAULT 8,
                                                   p_single_budget double precision DEFAULT 1000,
                                                   p_row_budget double precision DEFAULT 4000,
                                                   p_max_freq double precision DEFAULT 0.1)
    RETURNS TABLE (terms tsquery[], idf double precision[], first_pass tsquery, fill_pass tsquery)
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    RETURN QUERY SELECT * FROM memvault.sparse_plan_v3(p_query, p_max_terms, p_single_budget, p_row_budget,
                                                       p_max_freq, 'infinity');
END
$$;

-- The sparse rail's plan for BM25 scoring (_sparse_rail_v2): the terms, first and fill passes of sparse_plan_v3
-- (pair terms within p_pair_budget)
-- over the query's lexemes less its Chinese stop words (zh_stop_v1; English ones never become lexemes), and for
-- each term its lexeme and BM25's idf, ln(1 + (N - n + 0.5) / (n + 0.5)) (N blocks, n holding it; from
-- lexeme_stats_v1's freq = n / N); avg_len, the vault's mean block length in distinct lexemes (postings /
-- blocks of lexeme_stats_state; NULL before the vault is counted: no length normalization then).
CREATE OR REPLACE FUNCTION memvault.sparse_plan_v4(p_query text, p_max_terms integer DEFAULT 8,
                                                   p_single_budget double precision DEFAULT 1000,
                                                   p_row_budget double precision DEFAULT 4000,
                                                   p_max_freq double precision DEFAULT 0.1,
                                                   p_pair_budget double precision DEFAULT 70000)
    RETURNS TABLE (terms tsquery[], lexemes text[], idf double precision[], first_pass tsquery, fill_pass tsquery,
                   avg_len double precision)
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = memvault, pg_catalog
    AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH s AS (
        SELECT st.lexeme, st.freq, st.est_rows, row_number() OVER (ORDER BY st.freq, st.lexeme) AS rarity
        FROM memvault.lexeme_stats_v1(ARRAY(
                 SELECT l FROM unnest(tsvector_to_array(memvault.sparse_document_v1(p_query))) AS l
                 WHERE NOT memvault.zh_stop_v1(l))) AS st
    ), t AS (
        SELECT s.lexeme, s.freq, s.est_rows, quote_literal(s.lexeme) AS lit,
               row_number() OVER w AS rn, sum(s.est_rows) OVER w AS cum_rows
        FROM s WHERE s.rarity = 1 OR s.freq <= p_max_freq
        WINDOW w AS (ORDER BY s.freq, s.lexeme)
    ), k AS (
        SELECT t.*, (t.rn = 1 OR t.cum_rows <= p_single_budget) AS single, t.cum_rows <= p_row_budget AS fill
        FROM t WHERE t.rn <= p_max_terms
    ), kp AS (
        SELECT k.*, sum(CASE WHEN k.single THEN 0 ELSE k.est_rows END) OVER (ORDER BY k.rn) <= p_pair_budget AS pair
        FROM k
    ), parts AS (
        SELECT kp.lit AS part, kp.rn FROM kp WHERE kp.single
        UNION ALL
        SELECT format('%s & (%s)', a.lit, string_agg(b.lit, ' | ' ORDER BY b.rn)), a.rn
        FROM kp a JOIN kp b ON a.rn < b.rn
        WHERE NOT a.single AND NOT b.single AND a.pair AND b.pair
        GROUP BY a.lit, a.rn
    ), first AS (
        SELECT string_agg(parts.part, ' | ' ORDER BY parts.rn) AS q FROM parts
    )
    SELECT (SELECT array_agg(k.lit::tsquery ORDER BY k.rn) FROM k),
           (SELECT array_agg(k.lexeme ORDER BY k.rn) FROM k),
           (SELECT array_agg(ln(1.0 + (k.est_rows / greatest(k.freq, 1e-9) - k.est_rows + 0.5) / (k.est_rows + 0.5))
                             ORDER BY k.rn) FROM k),
           first.q::tsquery,
           (SELECT first.q || ' | ' || string_agg(k.lit, ' | ') FROM k WHERE NOT k.single AND k.fill)::tsquery,
           (SELECT st.postings::double precision / greatest(st.blocks, 1) FROM memvault.lexeme_stats_state st
            WHERE st.vault_id = memvault.current_vault_id() AND st.postings > 0)
    FROM first
    WHERE EXISTS (SELECT 1 FROM k);
END
$$;


-- sparse_plan_v4 without a pair budget (the plan before it).
CREATE OR REPLACE FUNCTION memvault.sparse_plan_v2(p_query text, p_max_terms integer DEFAULT 8,
                                                   p_single_budget double precision DEFAULT 1000,
                                                   p_row_budget double precision DEFAULT 4000,
                                                   p_max_freq double precision DEFAULT 0.1)
    RETURNS TABLE (terms tsquery[], lexemes text[], idf double precision[], first_pass tsquery, fill_pass tsquery,
                   avg_len double precision)
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    RETURN QUERY SELECT * FROM memvault.sparse_plan_v4(p_query, p_max_terms, p_single_budget, p_row_budget,
                                                       p_max_freq, 'infinity');
END
$$;

-- How many blocks the vault in scope has, counted up to p_cap (enough to choose exact or HNSW search).
CREATE OR REPLACE FUNCTION memvault.vault_block_count_v1(p_cap integer DEFAULT 5000)
    RETURNS integer
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT count(*)::integer FROM (
        SELECT 1 FROM memvault.block b WHERE b.vault_id = memvault.current_vault_id() LIMIT p_cap + 1
    ) s
$$;

-- The sparse rail's scan. Under row-level security the planner may not use `tsv @@ q` (not LEAKPROOF) as an
-- index condition ahead of the policy, so the GIN index is never used and every row of the vault is tested
-- (41 ms at 30k blocks). This SECURITY DEFINER helper (owned by the migrating superuser, so the policy does not
-- apply) scopes to the caller's vault explicitly and lets the GIN index find the matches. It reads the narrow
-- memvault.block_terms (028-block-terms.sql: the tsvector and the filters, many rows to a page), not block,
-- whose ~4 kB rows made every match a heap page read (5,059 pages for 4,178 matches at a million blocks).
-- A match scores the idf of the query's terms it holds, + 0.01 ts_rank as a tie-break. Every match is scored,
-- so both parts are cheap where they can be (at a million blocks a question's first pass matches up to ~8,000
-- rows for its 50 best; the scan p95 24 -> 19 ms, the same rows in the same order on 200 questions):
--   the idf sum: one CASE per term for up to 16 terms (a subquery over the arrays per row cost ~1 us more);
--   ts_rank (at most ~1.61 with normalization 8: each query word adds at most (1 + pi^2/6) / (pi^2/6), averaged
--   over the words, divided by the row's distinct words) only for the rows whose idf sum is within 0.02 of
--   the p_n-th best: no other row can reach the first p_n.
CREATE OR REPLACE FUNCTION memvault._sparse_rail_v1(p_vault uuid, p_terms tsquery[], p_idf double precision[],
                                                    p_any tsquery, p_as_of timestamptz, p_past boolean,
                                                    p_noise text[], p_n integer)
    RETURNS bigint[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = memvault, pg_catalog
    AS $$
#variable_conflict use_column
BEGIN
    RETURN (SELECT array_agg(x.id ORDER BY x.sc DESC, x.id) FROM (
        WITH m AS MATERIALIZED (
            SELECT b.block_id AS id, b.tsv,
                   CASE WHEN cardinality(p_terms) <= 16 THEN
                     CASE WHEN b.tsv @@ p_terms[1] THEN p_idf[1] ELSE 0 END
                   + CASE WHEN b.tsv @@ p_terms[2] THEN p_idf[2] ELSE 0 END
                   + CASE WHEN b.tsv @@ p_terms[3] THEN p_idf[3] ELSE 0 END
                   + CASE WHEN b.tsv @@ p_terms[4] THEN p_idf[4] ELSE 0 END
                   + CASE WHEN b.tsv @@ p_terms[5] THEN p_idf[5] ELSE 0 END
                   + CASE WHEN b.tsv @@ p_terms[6] THEN p_idf[6] ELSE 0 END
                   + CASE WHEN b.tsv @@ p_terms[7] THEN p_idf[7] ELSE 0 END
                   + CASE WHEN b.tsv @@ p_terms[8] THEN p_idf[8] ELSE 0 END
                   + CASE WHEN b.tsv @@ p_terms[9] THEN p_idf[9] ELSE 0 END
                   + CASE WHEN b.tsv @@ p_terms[10] THEN p_idf[10] ELSE 0 END
                   + CASE WHEN b.tsv @@ p_terms[11] THEN p_idf[11] ELSE 0 END
                   + CASE WHEN b.tsv @@ p_terms[12] THEN p_idf[12] ELSE 0 END
                   + CASE WHEN b.tsv @@ p_terms[13] THEN p_idf[13] ELSE 0 END
                   + CASE WHEN b.tsv @@ p_terms[14] THEN p_idf[14] ELSE 0 END
                   + CASE WHEN b.tsv @@ p_terms[15] THEN p_idf[15] ELSE 0 END
                   + CASE WHEN b.tsv @@ p_terms[16] THEN p_idf[16] ELSE 0 END
                   ELSE (SELECT sum(w.idf) FROM unnest(p_terms, p_idf) AS w(q, idf) WHERE b.tsv @@ w.q) END AS s
            FROM memvault.block_terms b
            WHERE b.vault_id = p_vault AND p_vault = memvault.current_vault_id() AND b.tsv @@ p_any
              AND (p_past OR (b.retracted_at IS NULL AND b.valid_at <= p_as_of
                              AND (b.invalid_at IS NULL OR b.invalid_at > p_as_of)))
              AND NOT (b.quarantine_tags && p_noise)
        ), cut AS (
            SELECT min(t.s) AS s FROM (SELECT m.s FROM m ORDER BY m.s DESC LIMIT p_n) t
        )
        SELECT m.id, m.s + 0.01 * ts_rank(m.tsv, p_any, 8) AS sc
        FROM m, cut
        WHERE m.s >= cut.s - 0.02
        ORDER BY sc DESC, m.id
        LIMIT p_n
    ) x);
END
$$;
REVOKE ALL ON FUNCTION memvault._sparse_rail_v1(uuid, tsquery[], double precision[], tsquery, timestamptz, boolean,
                                               text[], integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memvault._sparse_rail_v1(uuid, tsquery[], double precision[], tsquery, timestamptz, boolean,
                                                  text[], integer) TO memvault_app;

-- The sparse rail's scan of a small vault among many (fast_search_v1's sparse_scan): the same statement as
-- _sparse_rail_v1 (the same matches, scores and order), but the vault's rows are read through block_terms' primary
-- key (vault_id, block_id) and each tested with @@, never through the GIN index. The GIN index is one for every
-- vault: its posting lists are the whole table's, so a common term costs as much in a vault of 1,000 blocks as in
-- the largest; in a database of a million blocks in 1,000 vaults the GIN scan of a vault of 1,000 took 39 ms
-- where reading its 1,000 rows takes 1-2 ms (~1.4 us a row). The SET clauses leave the planner the primary key
-- only (a GIN index has no plain index scan), whatever its estimate for the vault.
-- Its body is _sparse_rail_v1's own (pg_proc.prosrc, copied here at every install), so the two cannot drift.
DO $do$
BEGIN
    EXECUTE format($f$
        CREATE OR REPLACE FUNCTION memvault._sparse_rail_scan_v1(p_vault uuid, p_terms tsquery[],
                                                                 p_idf double precision[], p_any tsquery,
                                                                 p_as_of timestamptz, p_past boolean,
                                                                 p_noise text[], p_n integer)
            RETURNS bigint[]
            LANGUAGE plpgsql STABLE SECURITY DEFINER
            SET search_path = memvault, pg_catalog
            SET enable_bitmapscan = off
            SET enable_seqscan = off
            AS %L $f$,
        (SELECT p.prosrc FROM pg_catalog.pg_proc p
         WHERE p.oid = 'memvault._sparse_rail_v1(uuid, tsquery[], double precision[], tsquery, timestamptz, boolean,
                                                 text[], integer)'::regprocedure));
END
$do$;
REVOKE ALL ON FUNCTION memvault._sparse_rail_scan_v1(uuid, tsquery[], double precision[], tsquery, timestamptz,
                                                    boolean, text[], integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memvault._sparse_rail_scan_v1(uuid, tsquery[], double precision[], tsquery, timestamptz,
                                                       boolean, text[], integer) TO memvault_app;

-- The sparse rail's idf-sum scan through the vault's rows (p_scan: _sparse_rail_scan_v1) or the GIN index
-- (_sparse_rail_v1): the same matches, scores and order either way; fast_search_v1's every pass (first, fill,
-- feedback) asks it with sparse_scan_v1's choice.
CREATE OR REPLACE FUNCTION memvault._sparse_rail_v3(p_vault uuid, p_terms tsquery[], p_idf double precision[],
                                                    p_any tsquery, p_as_of timestamptz, p_past boolean,
                                                    p_noise text[], p_n integer, p_scan boolean)
    RETURNS bigint[]
    LANGUAGE plpgsql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    IF p_scan THEN
        RETURN memvault._sparse_rail_scan_v1(p_vault, p_terms, p_idf, p_any, p_as_of, p_past, p_noise, p_n);
    END IF;
    RETURN memvault._sparse_rail_v1(p_vault, p_terms, p_idf, p_any, p_as_of, p_past, p_noise, p_n);
END
$$;
REVOKE ALL ON FUNCTION memvault._sparse_rail_v3(uuid, tsquery[], double precision[], tsquery, timestamptz, boolean,
                                               text[], integer, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memvault._sparse_rail_v3(uuid, tsquery[], double precision[], tsquery, timestamptz, boolean,
                                                  text[], integer, boolean) TO memvault_app;

-- Whether the sparse rail reads the vault in scope row by row (_sparse_rail_scan_v1) rather than through the GIN
-- index: when it holds at most p_max blocks (5,000: counted up to there) and less than p_share of block_terms' rows
-- (pg_class.reltuples, as of the last ANALYZE). Measured on 2 cores: the GIN scan costs ~0.04 ms per 1,000 rows of
-- the table for a typical question (4.6 ms at 110k rows, 39 ms at a million), the row scan ~1.4 ms per 1,000 rows
-- of the vault: even at 1/35 of the table; p_share 0.025 keeps the row scan on the side where it wins.
CREATE OR REPLACE FUNCTION memvault.sparse_scan_v1(p_vault_blocks integer, p_max integer DEFAULT 5000,
                                                   p_share double precision DEFAULT 0.025)
    RETURNS boolean
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN  -- plpgsql, not sql: its plan is kept for the session (a sql function's body is planned again in every
       -- statement that calls it: 0.13 ms of each fast recall, docs/recall-cpu.md round 5)
    RETURN p_vault_blocks <= p_max
           AND p_vault_blocks < p_share * (SELECT c.reltuples FROM pg_catalog.pg_class c
                                           WHERE c.oid = 'memvault.block_terms'::regclass);
END
$$;

-- The sparse rail's scan with BM25 scoring: the same matches as _sparse_rail_v1 (p_any through the GIN index),
-- each scored sum over the query's lexemes it holds of idf x tf (k1 + 1) / (tf + k1 (1 - b + b len / avg_len)),
-- tf the lexeme's positions in the block, len its distinct lexemes (the length lexeme_stats sums); ts_rank
-- breaks ties. Without avg_len (the vault not counted yet), no length normalization.
CREATE OR REPLACE FUNCTION memvault._sparse_rail_v2(p_vault uuid, p_lexemes text[], p_idf double precision[],
                                                    p_any tsquery, p_as_of timestamptz, p_past boolean,
                                                    p_noise text[], p_n integer, p_k1 double precision,
                                                    p_b double precision, p_avg_len double precision)
    RETURNS bigint[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = memvault, pg_catalog
    AS $$
#variable_conflict use_column
BEGIN
    RETURN (SELECT array_agg(x.id ORDER BY x.sc DESC, x.id) FROM (
        SELECT b.block_id AS id,
               coalesce((SELECT sum(w.idf * (p_k1 + 1) * u.tf
                                    / (u.tf + p_k1 * (1 - p_b + p_b * length(b.tsv)
                                                                / coalesce(p_avg_len, length(b.tsv)))))
                         FROM (SELECT e.lexeme, coalesce(cardinality(e.positions), 1)::double precision AS tf
                               FROM unnest(b.tsv) AS e WHERE e.lexeme = ANY (p_lexemes)) u
                         JOIN unnest(p_lexemes, p_idf) AS w(lexeme, idf) ON w.lexeme = u.lexeme), 0)
               + 0.01 * ts_rank(b.tsv, p_any, 8) AS sc
        FROM memvault.block_terms b
        WHERE b.vault_id = p_vault AND p_vault = memvault.current_vault_id() AND b.tsv @@ p_any
          AND (p_past OR (b.retracted_at IS NULL AND b.valid_at <= p_as_of
                          AND (b.invalid_at IS NULL OR b.invalid_at > p_as_of)))
          AND NOT (b.quarantine_tags && p_noise)
        ORDER BY sc DESC, b.block_id
        LIMIT p_n
    ) x);
END
$$;
REVOKE ALL ON FUNCTION memvault._sparse_rail_v2(uuid, text[], double precision[], tsquery, timestamptz, boolean,
                                               text[], integer, double precision, double precision,
                                               double precision) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memvault._sparse_rail_v2(uuid, text[], double precision[], tsquery, timestamptz, boolean,
                                                  text[], integer, double precision, double precision,
                                                  double precision) TO memvault_app;

-- A second dense query's rail (fast_search_v1's focus_dense_w): the vault's blocks nearest p_qvec, exactly or through
-- the vault's HNSW index, with the dense rail's filters; fast_search_v1's dense rail and its focus query both.
CREATE OR REPLACE FUNCTION memvault._dense_rail_v1(p_vault uuid, p_qvec vector, p_n integer, p_exact boolean,
                                                   p_past boolean, p_as_of timestamptz, p_noise text[])
    RETURNS bigint[]
    LANGUAGE plpgsql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
DECLARE
    v_ids bigint[];
BEGIN
    IF p_exact THEN
        SELECT array_agg(x.id ORDER BY x.dist, x.id) INTO v_ids FROM (
            SELECT b.id, (b.embedding <=> p_qvec) + 0 AS dist
            FROM memvault.block b
            WHERE b.vault_id = p_vault AND b.embedding IS NOT NULL
              AND (p_past OR (b.retracted_at IS NULL AND b.valid_at <= p_as_of
                              AND (b.invalid_at IS NULL OR b.invalid_at > p_as_of)))
              AND NOT (b.quarantine_tags && p_noise)
            ORDER BY (b.embedding <=> p_qvec) + 0
            LIMIT p_n
        ) x;
    ELSE
        EXECUTE format($q$
            SELECT array_agg(x.id ORDER BY x.r) FROM (
                SELECT b.id, row_number() OVER () AS r
                FROM (
                    SELECT b.id FROM memvault.block b
                    WHERE b.vault_id = %L::uuid
                      AND ($3 OR (b.retracted_at IS NULL AND b.valid_at <= $4
                                  AND (b.invalid_at IS NULL OR b.invalid_at > $4)))
                      AND NOT (b.quarantine_tags && $5)
                    ORDER BY b.embedding <=> $1
                    LIMIT $2
                ) b
            ) x $q$, p_vault)
        INTO v_ids USING p_qvec, p_n, p_past, p_as_of, p_noise;
    END IF;
    RETURN v_ids;
END
$$;

-- Fast search, one function: dense top-N and sparse top-N for the vault in scope, fused by RRF
-- (score = sum over rails of w / (k + rank)); rrf_norm divides by the best possible score, so 1.0 is rank 1
-- on both rails. Filters: valid at p_as_of (default now), not retracted, not quarantined as noise. With
-- p_known_at (transaction time in the past), candidates are drawn from every version and the scoring stage
-- (score_candidates_v2) keeps the version believed at p_known_at.
-- p_cfg keys (all optional): dense_n 100, sparse_n 100, rrf_k 60, dense_w 1, sparse_w 1, exact (null: probe
-- the vault size against exact_below 5000), vault_blocks (its block count up to 5,000, when the caller knows
-- it), sparse_scan (null: sparse_scan_v1 decides from the vault's size and the table's; true / false: the vault's
-- rows / the GIN index, idf-sum scoring only), ef_search 100 (up to 50k rows in the vault's index; more past it:
-- ann_ef_search_v1), sparse_max_terms 8, sparse_single_budget 1000, sparse_row_budget 4000, sparse_max_freq 0.1,
-- sparse_pair_budget 70000 (see sparse_plan_v3), sparse_bm25 false (true: BM25 scoring, sparse_k1 1.2, sparse_b
-- 0.75: sparse_plan_v4, _sparse_rail_v2), noise_tags (text[]); the second dense rail
-- (memvault.block_rail2) when qvec2 (the query's vector of that model, as text) and rail2_model are given, at
-- weight rail2_w 0.5, reading rail2_n blocks (0 or absent: dense_n) (rrf_norm stays relative to the two first
-- rails, so a candidate on all three exceeds 1);
-- a second dense query's rail when qvec_focus (a vector of the main model, as text) is given, at weight
-- focus_dense_w 0; the sparse rail's pseudo-relevance feedback at weight sparse_prf_w 0 (sparse_prf_docs 10,
-- sparse_prf_terms 5, sparse_prf_term_w 0.5; below).
-- Since round 4 of docs/recall-cpu.md it is its two halves: the sparse side (_sparse_side_v1: the query's text
-- only, no vector) and the rest (fast_search_v2: the dense rails and RRF, given the sparse side's rankings), so
-- that a recall can send the sparse side ahead while the models embed and classify (sparse_ahead_v1).
CREATE OR REPLACE FUNCTION memvault.fast_search_v1(
    p_qvec     vector,
    p_query    text,
    p_as_of    timestamptz DEFAULT NULL,
    p_known_at timestamptz DEFAULT NULL,
    p_cfg      jsonb DEFAULT '{}'::jsonb
)
    RETURNS TABLE (id bigint, rrf double precision, rrf_norm double precision, dense_rank integer,
                   sparse_rank integer)
    LANGUAGE plpgsql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
#variable_conflict use_column
DECLARE
    v_sparse bigint[];
    v_prf    bigint[];
BEGIN
    SELECT s.sparse, s.prf INTO v_sparse, v_prf FROM memvault._sparse_side_v1(p_query, p_as_of, p_known_at, p_cfg) s;
    RETURN QUERY SELECT * FROM memvault.fast_search_v2(p_qvec, p_as_of, p_known_at, p_cfg, v_sparse, v_prf);
END
$$;

-- The sparse side of fast search (fast_search_v1's p_query and p_cfg keys sparse_n, noise_tags, sparse_*,
-- vault_blocks, exact_below; valid at p_as_of, default now; every version with p_known_at, 2 x sparse_n deep):
-- the sparse rail's ranked ids and, with sparse_prf_w > 0, its pseudo-relevance feedback pass's. Needs no query
-- vector and nothing the models decide: a recall sends it ahead of them (sparse_ahead_v1).
CREATE OR REPLACE FUNCTION memvault._sparse_side_v1(
    p_query    text,
    p_as_of    timestamptz DEFAULT NULL,
    p_known_at timestamptz DEFAULT NULL,
    p_cfg      jsonb DEFAULT '{}'::jsonb
)
    RETURNS TABLE (sparse bigint[], prf bigint[])
    LANGUAGE plpgsql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
#variable_conflict use_column
DECLARE
    v_vault    uuid := memvault.current_vault_id();
    v_as_of    timestamptz := coalesce(p_as_of, now());
    v_past     boolean := p_known_at IS NOT NULL;
    v_sparse_n integer := coalesce((p_cfg ->> 'sparse_n')::integer, 100);
    v_noise    text[] := coalesce(ARRAY(SELECT jsonb_array_elements_text(p_cfg -> 'noise_tags')),
                                  memvault.default_noise_tags_v1());
    v_sparse   bigint[];
    v_scan     boolean := (p_cfg ->> 'sparse_scan')::boolean;
    v_terms    tsquery[];
    v_idf      double precision[];
    v_first    tsquery;
    v_fill     tsquery;
    v_bm25     boolean := coalesce((p_cfg ->> 'sparse_bm25')::boolean, false);
    v_k1       double precision := coalesce((p_cfg ->> 'sparse_k1')::double precision, 1.2);
    v_b        double precision := coalesce((p_cfg ->> 'sparse_b')::double precision, 0.75);
    v_lexemes  text[];
    v_avg_len  double precision;
    v_prf_w    double precision := coalesce((p_cfg ->> 'sparse_prf_w')::double precision, 0);
    v_prf      bigint[];
    v_xterms   tsquery[];
    v_xidf     double precision[];
    v_xany     tsquery;
    v_x        tsquery;
BEGIN
    IF v_vault IS NULL THEN
        RAISE EXCEPTION 'fast_search_v1 needs a vault in scope (memvault.vault_id)' USING ERRCODE = 'MV422';
    END IF;
    IF v_past THEN  -- versions are checked after scoring; widen the net
        v_sparse_n := v_sparse_n * 2;
    END IF;
    IF v_scan IS NULL AND v_sparse_n > 0 AND NOT v_bm25 THEN  -- the caller's count (FastSearch keeps it a minute)
        v_scan := memvault.sparse_scan_v1(coalesce((p_cfg ->> 'vault_blocks')::integer, memvault.vault_block_count_v1(
            greatest(coalesce((p_cfg ->> 'exact_below')::integer, 5000), 5000))));
    END IF;

    -- Sparse rail: rare terms alone and common terms in pairs, each match scored by the idf of the query's terms
    -- it contains (ts_rank breaks ties); common terms alone only when that first pass finds too few rows.
    -- With sparse_bm25, the same matches scored by BM25 (_sparse_rail_v2).
    IF v_sparse_n > 0 AND v_bm25 THEN
        SELECT p.lexemes, p.idf, p.first_pass, p.fill_pass, p.avg_len INTO v_lexemes, v_idf, v_first, v_fill, v_avg_len
        FROM memvault.sparse_plan_v4(p_query, coalesce((p_cfg ->> 'sparse_max_terms')::integer, 8),
                                     coalesce((p_cfg ->> 'sparse_single_budget')::double precision, 1000),
                                     coalesce((p_cfg ->> 'sparse_row_budget')::double precision, 4000),
                                     coalesce((p_cfg ->> 'sparse_max_freq')::double precision, 0.1),
                                     coalesce((p_cfg ->> 'sparse_pair_budget')::double precision, 70000)) p;
        IF v_first IS NOT NULL THEN
            v_sparse := memvault._sparse_rail_v2(v_vault, v_lexemes, v_idf, v_first, v_as_of, v_past, v_noise,
                                                 v_sparse_n, v_k1, v_b, v_avg_len);
            IF coalesce(cardinality(v_sparse), 0) < v_sparse_n AND v_fill IS NOT NULL THEN
                v_sparse := memvault._sparse_rail_v2(v_vault, v_lexemes, v_idf, v_fill, v_as_of, v_past, v_noise,
                                                     v_sparse_n, v_k1, v_b, v_avg_len);
            END IF;
        END IF;
    ELSIF v_sparse_n > 0 THEN
        SELECT p.terms, p.idf, p.first_pass, p.fill_pass INTO v_terms, v_idf, v_first, v_fill
        FROM memvault.sparse_plan_v3(p_query, coalesce((p_cfg ->> 'sparse_max_terms')::integer, 8),
                                     coalesce((p_cfg ->> 'sparse_single_budget')::double precision, 1000),
                                     coalesce((p_cfg ->> 'sparse_row_budget')::double precision, 4000),
                                     coalesce((p_cfg ->> 'sparse_max_freq')::double precision, 0.1),
                                     coalesce((p_cfg ->> 'sparse_pair_budget')::double precision, 70000)) p;
        IF v_first IS NOT NULL THEN  -- v_scan: a small vault among many reads its rows, not the GIN index
            v_sparse := memvault._sparse_rail_v3(v_vault, v_terms, v_idf, v_first, v_as_of, v_past, v_noise,
                                                 v_sparse_n, v_scan);
            IF coalesce(cardinality(v_sparse), 0) < v_sparse_n AND v_fill IS NOT NULL THEN
                v_sparse := memvault._sparse_rail_v3(v_vault, v_terms, v_idf, v_fill, v_as_of, v_past, v_noise,
                                                     v_sparse_n, v_scan);
            END IF;
        END IF;
    END IF;

    -- Pseudo-relevance feedback on the sparse rail (opt-in, sparse_prf_w > 0; idf-sum scoring only): the lexemes
    -- that at least two of the rail's sparse_prf_docs (10) best blocks hold and the query does not, rare ones
    -- (vault frequency at most sparse_max_freq) by count x idf, within sparse_single_budget estimated rows in
    -- all, at most sparse_prf_terms (5) of them, join the query's terms at sparse_prf_term_w (0.5) x their idf in
    -- a second pass over the first pass's matches and theirs; its ranking is a rail of its own at weight
    -- sparse_prf_w.
    IF v_prf_w > 0 AND NOT v_bm25 AND v_first IS NOT NULL AND coalesce(cardinality(v_sparse), 0) >= 2 THEN
        WITH c AS MATERIALIZED (
            SELECT l.lexeme, count(*) AS n
            FROM memvault.block_terms b CROSS JOIN unnest(tsvector_to_array(b.tsv)) AS l(lexeme)
            WHERE b.vault_id = v_vault
              AND b.block_id = ANY (v_sparse[1:coalesce((p_cfg ->> 'sparse_prf_docs')::integer, 10)])
              AND l.lexeme <> ALL (tsvector_to_array(memvault.sparse_document_v1(p_query)))
            GROUP BY l.lexeme HAVING count(*) >= 2
        ), st AS (
            SELECT c.lexeme, c.n, x.freq, x.est_rows, c.n * ln(1.0 / greatest(x.freq, 1e-9)) AS sc
            FROM c JOIN memvault.lexeme_stats_v1(ARRAY(SELECT c.lexeme FROM c)) x ON x.lexeme = c.lexeme
            WHERE x.freq <= coalesce((p_cfg ->> 'sparse_max_freq')::double precision, 0.1)
        ), k AS (
            SELECT st.*, sum(st.est_rows) OVER (ORDER BY st.sc DESC, st.lexeme) AS cum_rows,
                   row_number() OVER (ORDER BY st.sc DESC, st.lexeme) AS rn
            FROM st
        )
        SELECT array_agg(quote_literal(k.lexeme)::tsquery ORDER BY k.rn),
               array_agg(coalesce((p_cfg ->> 'sparse_prf_term_w')::double precision, 0.5)
                         * ln(1.0 / greatest(k.freq, 1e-9)) ORDER BY k.rn)
        INTO v_xterms, v_xidf
        FROM k
        WHERE k.rn <= coalesce((p_cfg ->> 'sparse_prf_terms')::integer, 5)
          AND k.cum_rows <= coalesce((p_cfg ->> 'sparse_single_budget')::double precision, 1000);
        IF v_xterms IS NOT NULL THEN
            v_xany := v_first;
            FOREACH v_x IN ARRAY v_xterms LOOP
                v_xany := v_xany || v_x;
            END LOOP;
            v_prf := memvault._sparse_rail_v3(v_vault, v_terms || v_xterms, v_idf || v_xidf, v_xany, v_as_of,
                                              v_past, v_noise, v_sparse_n, v_scan);
        END IF;
    END IF;
    RETURN QUERY SELECT v_sparse, v_prf;
END
$$;

-- fast_search_v1 given its sparse side (_sparse_side_v1's sparse and prf: ranked ids, NULL for none): the dense
-- rail, the second dense rail and the focus rail, fused with them by RRF. The same rows as fast_search_v1 when
-- p_sparse / p_prf are what _sparse_side_v1 returns for the same p_as_of, p_known_at and p_cfg.
CREATE OR REPLACE FUNCTION memvault.fast_search_v2(
    p_qvec     vector,
    p_as_of    timestamptz,
    p_known_at timestamptz,
    p_cfg      jsonb,
    p_sparse   bigint[],
    p_prf      bigint[]
)
    RETURNS TABLE (id bigint, rrf double precision, rrf_norm double precision, dense_rank integer,
                   sparse_rank integer)
    LANGUAGE plpgsql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
DECLARE
    v_vault    uuid := memvault.current_vault_id();
    v_as_of    timestamptz := coalesce(p_as_of, now());
    v_past     boolean := p_known_at IS NOT NULL;
    v_k        double precision := coalesce((p_cfg ->> 'rrf_k')::double precision, 60);
    v_dw       double precision := coalesce((p_cfg ->> 'dense_w')::double precision, 1);
    v_sw       double precision := coalesce((p_cfg ->> 'sparse_w')::double precision, 1);
    v_dense_n  integer := coalesce((p_cfg ->> 'dense_n')::integer, 100);
    v_exact    boolean := (p_cfg ->> 'exact')::boolean;
    v_noise    text[] := coalesce(ARRAY(SELECT jsonb_array_elements_text(p_cfg -> 'noise_tags')),
                                  memvault.default_noise_tags_v1());
    v_rw       double precision := coalesce((p_cfg ->> 'rail2_w')::double precision, 0.5);
    v_qvec2    vector := (p_cfg ->> 'qvec2')::vector;
    v_model2   text := p_cfg ->> 'rail2_model';
    v_rail2_n  integer := coalesce(nullif((p_cfg ->> 'rail2_n')::integer, 0), v_dense_n);
    v_dense    bigint[];
    v_sparse   bigint[] := p_sparse;
    v_rail2    bigint[];
    v_qfocus   vector := (p_cfg ->> 'qvec_focus')::vector;
    v_fw       double precision := coalesce((p_cfg ->> 'focus_dense_w')::double precision, 0);
    v_focus    bigint[];
    v_small    boolean;
    v_prf_w    double precision := coalesce((p_cfg ->> 'sparse_prf_w')::double precision, 0);
    v_prf      bigint[] := p_prf;
BEGIN
    IF v_vault IS NULL THEN
        RAISE EXCEPTION 'fast_search_v1 needs a vault in scope (memvault.vault_id)' USING ERRCODE = 'MV422';
    END IF;
    IF v_past THEN  -- versions are checked after scoring; widen the net
        v_dense_n := v_dense_n * 2;
        v_rail2_n := v_rail2_n * 2;
    END IF;
    IF v_exact IS NULL THEN  -- the caller's count (FastSearch keeps it a minute), else counted
        v_exact := coalesce((p_cfg ->> 'vault_blocks')::integer, memvault.vault_block_count_v1(
            greatest(coalesce((p_cfg ->> 'exact_below')::integer, 5000), 5000)))
            <= coalesce((p_cfg ->> 'exact_below')::integer, 5000);
    END IF;
    v_small := v_exact;
    -- A large vault is searched through its own HNSW index; until the background has built it, exactly.
    v_exact := v_exact OR NOT memvault.has_ann_index_v1(v_vault);

    -- Dense rail: exact distances in a small vault (or one whose own HNSW index the background has not built
    -- yet), else the vault's index, whose order is the rank (_dense_rail_v1, shared with the focus query).
    IF NOT v_exact AND ((p_qvec IS NOT NULL AND v_dense_n > 0) OR v_qfocus IS NOT NULL) THEN
        PERFORM set_config('hnsw.ef_search', memvault.ann_ef_search_v1(
            v_vault, coalesce((p_cfg ->> 'ef_search')::integer, greatest(v_dense_n, 100)))::text, true);
        PERFORM set_config('hnsw.iterative_scan', 'relaxed_order', true);
    END IF;
    IF p_qvec IS NOT NULL AND v_dense_n > 0 THEN
        v_dense := memvault._dense_rail_v1(v_vault, p_qvec, v_dense_n, v_exact, v_past, v_as_of, v_noise);
    END IF;

    -- The second dense rail (opt-in, app/read/rail2.py): the query's vector of the second model against the
    -- blocks the worker has embedded with that model, exactly (the column has no fixed dimension). In a small
    -- vault over all of them; in a large one over the two first rails' candidates only, which it re-ranks (an
    -- exact scan of 100,000 384-d vectors takes ~85 ms here; on LoCoMo the re-ranking alone gives 0.804 of the
    -- whole rail's 0.813).
    IF v_qvec2 IS NOT NULL AND v_model2 IS NOT NULL AND v_rw > 0 AND v_rail2_n > 0 THEN
        SELECT array_agg(x.id ORDER BY x.dist, x.id) INTO v_rail2 FROM (
            SELECT b.id, r.embedding <=> v_qvec2 AS dist
            FROM memvault.block_rail2 r
            JOIN memvault.block b ON b.vault_id = r.vault_id AND b.id = r.block_id
            WHERE r.vault_id = v_vault AND r.model = v_model2
              AND (v_small OR r.block_id = ANY (v_dense || v_sparse))
              AND (v_past OR (b.retracted_at IS NULL AND b.valid_at <= v_as_of
                              AND (b.invalid_at IS NULL OR b.invalid_at > v_as_of)))
              AND NOT (b.quarantine_tags && v_noise)
            ORDER BY 2, 1
            LIMIT v_rail2_n
        ) x;
    END IF;

    -- A second dense query (opt-in, focus_dense_w > 0): the question's focus, its subject's words without the request's
    -- framing (app/read/focus.py), as the vector qvec_focus; its nearest blocks are a rail of their own.
    IF v_qfocus IS NOT NULL AND v_fw > 0 AND v_dense_n > 0 THEN
        v_focus := memvault._dense_rail_v1(v_vault, v_qfocus, v_dense_n, v_exact, v_past, v_as_of, v_noise);
    END IF;

    RETURN QUERY
    WITH d AS (SELECT u.id, u.r::integer AS r FROM unnest(v_dense) WITH ORDINALITY AS u(id, r)),
         s AS (SELECT u.id, u.r::integer AS r FROM unnest(v_sparse) WITH ORDINALITY AS u(id, r)),
         r2 AS (SELECT u.id, u.r::integer AS r FROM unnest(v_rail2) WITH ORDINALITY AS u(id, r)),
         fo AS (SELECT u.id, u.r::integer AS r FROM unnest(v_focus) WITH ORDINALITY AS u(id, r)),
         px AS (SELECT u.id, u.r::integer AS r FROM unnest(v_prf) WITH ORDINALITY AS u(id, r)),
         f AS (
             SELECT coalesce(d.id, s.id, r2.id, fo.id, px.id) AS id,
                    coalesce(v_dw / (v_k + d.r), 0) + coalesce(v_sw / (v_k + s.r), 0)
                        + coalesce(v_rw / (v_k + r2.r), 0) + coalesce(v_fw / (v_k + fo.r), 0)
                        + coalesce(v_prf_w / (v_k + px.r), 0) AS rrf,
                    d.r AS dr, s.r AS sr
             FROM d FULL JOIN s ON s.id = d.id FULL JOIN r2 ON r2.id = coalesce(d.id, s.id)
             FULL JOIN fo ON fo.id = coalesce(d.id, s.id, r2.id)
             FULL JOIN px ON px.id = coalesce(d.id, s.id, r2.id, fo.id)
         )
    SELECT f.id, f.rrf, f.rrf / ((v_dw + v_sw) / (v_k + 1)), f.dr, f.sr
    FROM f
    ORDER BY f.rrf DESC, f.id;
END
$$;

-- The sparse side (_sparse_side_v1) as one statement of its own, in the vault's scope (memvault._enter_vault_v1,
-- from the connector's vault: app/read/ahead.py), sent at the start of a recall, before the models embed and
-- classify the question, on a pooled connection of its own; its rankings go to recall_fast_v5 with the rest.
-- p_as_of NULL is this statement's now(), a few milliseconds before the search's (under READ COMMITTED each of a
-- recall's statements reads its own snapshot already).
CREATE OR REPLACE FUNCTION memvault.sparse_ahead_v1(
    p_vault    uuid,
    p_actor    text,
    p_query    text,
    p_as_of    timestamptz DEFAULT NULL,
    p_known_at timestamptz DEFAULT NULL,
    p_cfg      jsonb DEFAULT '{}'::jsonb
)
    RETURNS TABLE (sparse bigint[], prf bigint[])
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
#variable_conflict use_column
BEGIN
    PERFORM memvault._enter_vault_v1(p_vault, p_actor);
    RETURN QUERY SELECT s.sparse, s.prf FROM memvault._sparse_side_v1(p_query, p_as_of, p_known_at, p_cfg) s;
END
$$;
REVOKE ALL ON FUNCTION memvault.sparse_ahead_v1(uuid, text, text, timestamptz, timestamptz, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memvault.sparse_ahead_v1(uuid, text, text, timestamptz, timestamptz, jsonb)
    TO memvault_service;

-- sparse_ahead_v1 with the recall's prefetch probe in the same statement (round 6 of docs/recall-cpu.md): the
-- Slow Thinker's cached answer for p_hash (prefetch_get_v1's row, its columns NULL on a miss; no probe with
-- p_hash NULL): the recall's probe rides with the sparse side, one round trip fewer on the API path (issue 33).
CREATE OR REPLACE FUNCTION memvault.sparse_ahead_v2(
    p_vault    uuid,
    p_actor    text,
    p_query    text,
    p_as_of    timestamptz,
    p_known_at timestamptz,
    p_cfg      jsonb,
    p_hash     bytea
)
    RETURNS TABLE (sparse bigint[], prf bigint[], probed boolean, query text, payload jsonb, confidence real,
                   created_at timestamptz)
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
#variable_conflict use_column
BEGIN
    PERFORM memvault._enter_vault_v1(p_vault, p_actor);
    RETURN QUERY
    SELECT s.sparse, s.prf, p_hash IS NOT NULL, g.query, g.payload, g.confidence, g.created_at
    FROM memvault._sparse_side_v1(p_query, p_as_of, p_known_at, p_cfg) s
    LEFT JOIN memvault.prefetch_get_v1(p_hash) g ON p_hash IS NOT NULL;
END
$$;
REVOKE ALL ON FUNCTION memvault.sparse_ahead_v2(uuid, text, text, timestamptz, timestamptz, jsonb, bytea)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memvault.sparse_ahead_v2(uuid, text, text, timestamptz, timestamptz, jsonb, bytea)
    TO memvault_service;

-- The seven quarantine tags NoiseFilter drops (seed 000, stage 10).
CREATE OR REPLACE FUNCTION memvault.default_noise_tags_v1()
    RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN ARRAY['noise', 'injection', 'poisoning', 'spam', 'low_quality', 'duplicate', 'contradiction'];


-- ---- QueryClassify: intent archetypes ---------------------------------------------------------------------------

-- Archetype queries without a vector from this embedder (filled on first use by the read track).
CREATE OR REPLACE FUNCTION memvault.archetypes_to_embed_v1(p_embedder text)
    RETURNS TABLE (id bigint, query text)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT a.id, a.query FROM memvault.intent_archetype a
    WHERE a.embedding IS NULL OR a.embedder IS DISTINCT FROM p_embedder
    ORDER BY a.id
$$;

CREATE OR REPLACE FUNCTION memvault.set_archetype_embeddings_v1(p_embedder text, p_ids bigint[], p_vectors vector[])
    RETURNS integer
    LANGUAGE sql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
    WITH u AS (
        UPDATE memvault.intent_archetype a SET embedder = p_embedder, embedding = v.vec
        FROM unnest(p_ids, p_vectors) AS v(id, vec)
        WHERE a.id = v.id
        RETURNING 1
    )
    SELECT count(*)::integer FROM u
$$;

CREATE OR REPLACE FUNCTION memvault.archetypes_v1(p_embedder text)
    RETURNS TABLE (intent text, lang text, query text, embedding vector)
    LANGUAGE sql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
    SELECT a.intent, a.lang, a.query, a.embedding FROM memvault.intent_archetype a
    WHERE a.embedder = p_embedder AND a.embedding IS NOT NULL
    ORDER BY a.id
$$;

-- ---- PersonalizedRouter -----------------------------------------------------------------------------------------

-- Intent counts of the vault in scope over the last 7, 30 and 90 days (recall_log).
CREATE OR REPLACE FUNCTION memvault.intent_distribution_v1(p_now timestamptz DEFAULT NULL)
    RETURNS TABLE (intent text, d7 bigint, d30 bigint, d90 bigint)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT r.intent,
           count(*) FILTER (WHERE r.at > coalesce(p_now, now()) - interval '7 days'),
           count(*) FILTER (WHERE r.at > coalesce(p_now, now()) - interval '30 days'),
           count(*)
    FROM memvault.recall_log r
    WHERE r.vault_id = memvault.current_vault_id() AND r.at > coalesce(p_now, now()) - interval '90 days'
    GROUP BY r.intent
    ORDER BY r.intent
$$;

-- ---- Write-back, recall_log, read-time sanitize audit, CRAG knowledge gaps ---------------------------------------

-- The key that makes two phrasings of the same query one (case, punctuation and spacing ignored).
CREATE OR REPLACE FUNCTION memvault.query_key_v1(p_query text)
    RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN btrim(regexp_replace(lower(p_query), '[^[:alnum:]\u3400-\u4dbf\u4e00-\u9fff]+', ' ', 'g'));

-- One recall, recorded: returned blocks get access_count + 1 and last_accessed_at (the read-write closed loop),
-- read-time sanitize hits go to audit_log, and a recall_log row keeps intent, mode, per-stage ms and the ids.
-- A CRAG verdict of INCORRECT seen twice or more for the same query key opens (or bumps) a knowledge gap.
-- p_audits: [{"block_id": 1, "rule": "...", "ruleset_version": "...", "detail": {...}}, ...]
CREATE OR REPLACE FUNCTION memvault.record_recall_v1(
    p_ids          bigint[],
    p_query        text,
    p_intent       text,
    p_mode         text,
    p_thinking     text,
    p_stage_ms     jsonb,
    p_tokens       integer,
    p_crag         text DEFAULT NULL,
    p_prefetch_hit boolean DEFAULT false,
    p_audits       jsonb DEFAULT '[]'::jsonb,
    p_writeback    boolean DEFAULT true
)
    RETURNS TABLE (recall_id bigint, gap_id bigint, incorrect_count integer)
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    v_vault uuid := memvault.current_vault_id();
    v_key   text := memvault.query_key_v1(p_query);
    v_id    bigint;
    v_gap   bigint;
    v_count integer;
BEGIN
    IF v_vault IS NULL THEN
        RAISE EXCEPTION 'record_recall_v1 needs a vault in scope' USING ERRCODE = 'MV422';
    END IF;
    -- A log row is not worth a WAL flush on the recall's path: without read-time sanitize hits to audit, this
    -- transaction commits without waiting for the disk (a crash may lose the last fraction of a second of
    -- recall_log rows; the database stays consistent).
    IF jsonb_array_length(coalesce(p_audits, '[]'::jsonb)) = 0 THEN
        PERFORM set_config('synchronous_commit', 'off', true);
    END IF;
    IF p_writeback AND cardinality(p_ids) > 0 THEN
        PERFORM memvault.touch_blocks_v1(p_ids, now());
    END IF;
    INSERT INTO memvault.audit_log (vault_id, actor, action, block_id, rule, ruleset_version, detail)
    SELECT v_vault, memvault.audit_actor(), 'read_sanitize.redact', (a ->> 'block_id')::bigint, a ->> 'rule', a ->> 'ruleset_version',
           coalesce(a -> 'detail', '{}'::jsonb)
    FROM jsonb_array_elements(coalesce(p_audits, '[]'::jsonb)) AS a;
    INSERT INTO memvault.recall_log (vault_id, query, intent, mode, thinking, stage_ms, returned_ids, tokens_used,
                                     crag_verdict, prefetch_hit)
    VALUES (v_vault, p_query, p_intent, p_mode, p_thinking, coalesce(p_stage_ms, '{}'::jsonb),
            coalesce(p_ids, '{}'), coalesce(p_tokens, 0), p_crag, coalesce(p_prefetch_hit, false))
    RETURNING id INTO v_id;
    IF p_crag = 'INCORRECT' THEN
        SELECT count(*)::integer INTO v_count FROM memvault.recall_log r
        WHERE r.vault_id = v_vault AND r.crag_verdict = 'INCORRECT' AND memvault.query_key_v1(r.query) = v_key;
        IF v_count >= 2 THEN
            INSERT INTO memvault.knowledge_gap AS g (vault_id, query, query_key, incorrect_count)
            VALUES (v_vault, p_query, v_key, v_count)
            ON CONFLICT (vault_id, query_key) DO UPDATE
                SET incorrect_count = excluded.incorrect_count, last_seen_at = now(), resolved_at = NULL
            RETURNING g.id INTO v_gap;
        END IF;
    END IF;
    RETURN QUERY SELECT v_id, v_gap, v_count;
END
$$;

-- Read-time sanitize verdicts on blocks' contents (sql/incremental/030-block-read-verdict.sql), for p_rules: each
-- p_ids[i] judged p_clean[i] on the text whose SHA-256 is p_hashes[i] (the caller's: the text it judged, not the
-- content as it may be now). Blocks gone or of another vault are skipped; a block given twice counts once.
CREATE OR REPLACE FUNCTION memvault.set_read_verdicts_v1(p_ids bigint[], p_rules text, p_hashes bytea[],
                                                         p_clean boolean[])
    RETURNS integer
    LANGUAGE sql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
    WITH given AS (
        SELECT DISTINCT ON (u.id) u.id, u.h, u.c
        FROM unnest(p_ids, p_hashes, p_clean) AS u(id, h, c)
        WHERE u.id IS NOT NULL AND u.h IS NOT NULL AND u.c IS NOT NULL
        ORDER BY u.id
    ), up AS (
        INSERT INTO memvault.block_read_verdict AS v (vault_id, block_id, rules, text_sha256, clean)
        SELECT b.vault_id, b.id, p_rules, g.h, g.c
        FROM given g JOIN memvault.block b ON b.vault_id = memvault.current_vault_id() AND b.id = g.id
        ON CONFLICT (vault_id, block_id) DO UPDATE
            SET rules = excluded.rules, text_sha256 = excluded.text_sha256, clean = excluded.clean, judged_at = now()
        RETURNING 1
    )
    SELECT count(*)::integer FROM up
$$;

-- record_recall_v1 as one statement of its own, in the vault's scope (memvault._enter_vault_v1, from the
-- connector's vault: app/read/unit.py): the log and write-back of a recall with no transaction open, in an implicit
-- transaction (one statement instead of BEGIN, the scope's set_config, the log and COMMIT); and the read-time
-- sanitize verdicts the recall computed (set_read_verdicts_v1: p_rules, p_verdict_ids, _hashes, _clean).
CREATE OR REPLACE FUNCTION memvault.record_recall_v2(
    p_vault        uuid,
    p_actor        text,
    p_ids          bigint[],
    p_query        text,
    p_intent       text,
    p_mode         text,
    p_thinking     text,
    p_stage_ms     jsonb,
    p_tokens       integer,
    p_crag         text DEFAULT NULL,
    p_prefetch_hit boolean DEFAULT false,
    p_audits       jsonb DEFAULT '[]'::jsonb,
    p_writeback    boolean DEFAULT true,
    p_rules        text DEFAULT NULL,
    p_verdict_ids  bigint[] DEFAULT '{}',
    p_verdict_hashes bytea[] DEFAULT '{}',
    p_verdict_clean boolean[] DEFAULT '{}'
)
    RETURNS TABLE (recall_id bigint, gap_id bigint, incorrect_count integer)
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    PERFORM memvault._enter_vault_v1(p_vault, p_actor);
    IF p_rules IS NOT NULL AND cardinality(p_verdict_ids) > 0 THEN
        PERFORM memvault.set_read_verdicts_v1(p_verdict_ids, p_rules, p_verdict_hashes, p_verdict_clean);
    END IF;
    RETURN QUERY SELECT * FROM memvault.record_recall_v1(p_ids, p_query, p_intent, p_mode, p_thinking, p_stage_ms,
                                                         p_tokens, p_crag, p_prefetch_hit, p_audits, p_writeback);
END
$$;
REVOKE ALL ON FUNCTION memvault.record_recall_v2(uuid, text, bigint[], text, text, text, text, jsonb, integer, text,
                                                 boolean, jsonb, boolean, text, bigint[], bytea[], boolean[])
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memvault.record_recall_v2(uuid, text, bigint[], text, text, text, text, jsonb, integer,
                                                    text, boolean, jsonb, boolean, text, bigint[], bytea[], boolean[])
    TO memvault_service;

-- The open knowledge gap for a query, if CRAG marked one (surfaced at the next such recall).
CREATE OR REPLACE FUNCTION memvault.knowledge_gap_for_v1(p_query text)
    RETURNS TABLE (id bigint, query text, incorrect_count integer, first_seen_at timestamptz,
                   last_seen_at timestamptz)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT g.id, g.query, g.incorrect_count, g.first_seen_at, g.last_seen_at FROM memvault.knowledge_gap g
    WHERE g.vault_id = memvault.current_vault_id() AND g.query_key = memvault.query_key_v1(p_query)
      AND g.resolved_at IS NULL AND g.incorrect_count >= 2
$$;

-- ---- Slow Thinker's prefetch cache (UNLOGGED, TTL) --------------------------------------------------------------

CREATE OR REPLACE FUNCTION memvault.prefetch_get_v1(p_hash bytea)
    RETURNS TABLE (query text, payload jsonb, confidence real, created_at timestamptz)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT c.query, c.payload, c.confidence, c.created_at FROM memvault.prefetch_cache c
    WHERE c.vault_id = memvault.current_vault_id() AND c.query_hash = p_hash AND c.expires_at > now()
$$;

-- prefetch_get_v1 as one statement of its own, in the vault's scope (memvault._enter_vault_v1, from the
-- connector's vault: app/read/unit.py): a recall's prefetch probe with no transaction open.
CREATE OR REPLACE FUNCTION memvault.prefetch_get_v2(p_vault uuid, p_actor text, p_hash bytea)
    RETURNS TABLE (query text, payload jsonb, confidence real, created_at timestamptz)
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    PERFORM memvault._enter_vault_v1(p_vault, p_actor);
    RETURN QUERY SELECT * FROM memvault.prefetch_get_v1(p_hash);
END
$$;
REVOKE ALL ON FUNCTION memvault.prefetch_get_v2(uuid, text, bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memvault.prefetch_get_v2(uuid, text, bytea) TO memvault_service;

CREATE OR REPLACE FUNCTION memvault.prefetch_put_v1(p_hash bytea, p_query text, p_payload jsonb,
                                                    p_confidence real, p_ttl_s integer DEFAULT 300)
    RETURNS timestamptz
    LANGUAGE sql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
    DELETE FROM memvault.prefetch_cache c
    WHERE c.vault_id = memvault.current_vault_id() AND c.expires_at <= now();
    INSERT INTO memvault.prefetch_cache AS c (vault_id, query_hash, query, payload, confidence, created_at,
                                              expires_at)
    VALUES (memvault.current_vault_id(), p_hash, p_query, p_payload, p_confidence, now(),
            now() + make_interval(secs => p_ttl_s))
    ON CONFLICT (vault_id, query_hash) DO UPDATE
        SET query = excluded.query, payload = excluded.payload, confidence = excluded.confidence,
            created_at = excluded.created_at, expires_at = excluded.expires_at
    RETURNING c.expires_at;
$$;

-- Predictions made for a session within the last p_within (admission rule "last prediction < 30 s" and the
-- deduplicator's "same question in the last 5 minutes").
CREATE OR REPLACE FUNCTION memvault.prefetch_recent_v1(p_session text, p_within interval DEFAULT '5 minutes')
    RETURNS TABLE (query text, created_at timestamptz)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT c.query, c.created_at FROM memvault.prefetch_cache c
    WHERE c.vault_id = memvault.current_vault_id() AND c.payload ->> 'session_id' = p_session
      AND c.created_at > now() - p_within
    ORDER BY c.created_at DESC
$$;

-- What the Slow Thinker reads: the session's last p_n turns (oldest first), its turn count and the vault's
-- number of conversations.
CREATE OR REPLACE FUNCTION memvault.prefetch_context_v1(p_session text, p_n integer DEFAULT 8)
    RETURNS TABLE (role text, content text, said_at timestamptz, session_turns integer, vault_sessions bigint)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    WITH s AS (
        SELECT (SELECT count(*) FROM memvault.turn t2
                WHERE t2.vault_id = memvault.current_vault_id() AND t2.session_id = p_session)::integer AS n,
               (SELECT count(*) FROM memvault.session s2 WHERE s2.vault_id = memvault.current_vault_id()) AS v
    )
    SELECT x.role, x.content, x.said_at, s.n, s.v FROM s
    LEFT JOIN LATERAL (
        SELECT t.role, t.content, t.said_at, t.seq FROM memvault.turn t
        WHERE t.vault_id = memvault.current_vault_id() AND t.session_id = p_session
        ORDER BY t.seq DESC LIMIT p_n
    ) x ON true
    ORDER BY x.seq NULLS FIRST
$$;

-- Read-time sanitize hits outside a recall (the Slow Thinker sanitizing before it stores), one audit row each.
CREATE OR REPLACE FUNCTION memvault.audit_read_sanitize_v1(p_audits jsonb)
    RETURNS integer
    LANGUAGE sql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
    WITH i AS (
        INSERT INTO memvault.audit_log (vault_id, actor, action, block_id, rule, ruleset_version, detail)
        SELECT memvault.current_vault_id(), memvault.audit_actor(), 'read_sanitize.redact', (a ->> 'block_id')::bigint, a ->> 'rule',
               a ->> 'ruleset_version', coalesce(a -> 'detail', '{}'::jsonb)
        FROM jsonb_array_elements(coalesce(p_audits, '[]'::jsonb)) AS a
        RETURNING 1
    )
    SELECT count(*)::integer FROM i
$$;

-- Write-back of a recall's returned blocks (access_count + 1, last_accessed_at), the read-write closed loop, in
-- memvault.block_usage (a narrow table: the wide block row and its indexes are not touched). recall() runs it
-- after answering, in its own transaction. Ids are locked in order, so concurrent write-backs cannot deadlock;
-- ids not in the vault in scope are ignored. Returns the number of blocks touched.
CREATE OR REPLACE FUNCTION memvault.touch_blocks_v1(p_ids bigint[], p_at timestamptz DEFAULT NULL)
    RETURNS integer
    LANGUAGE sql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
    WITH u AS (
        INSERT INTO memvault.block_usage AS u (vault_id, block_id, access_count, last_accessed_at)
        SELECT b.vault_id, b.id, 1, coalesce(p_at, now())
        FROM memvault.block b
        WHERE b.vault_id = memvault.current_vault_id() AND b.id = ANY (p_ids)
        ORDER BY b.id
        ON CONFLICT (vault_id, block_id) DO UPDATE
            SET access_count = u.access_count + 1,
                last_accessed_at = greatest(u.last_accessed_at, excluded.last_accessed_at)
        RETURNING 1
    )
    SELECT count(*)::integer FROM u
$$;


-- SessionContinuity: the conversation around the top hits. For each of p_ids (best first), the chunks of the
-- turns within p_window turns of its own, in the same session (the hits themselves left out); each neighbour
-- once, with the best hit it is nearest to and its distance in turns. The answer to a question is often a turn
-- or two after the turn that names the topic ("It was one of those moments where I felt tiny" after "we saw the
-- Perseid meteor shower"), and does not repeat the topic's words.
CREATE OR REPLACE FUNCTION memvault.session_neighbours_v1(p_ids bigint[], p_window integer DEFAULT 2)
    RETURNS TABLE (id bigint, parent_id bigint, distance integer)
    LANGUAGE plpgsql STABLE  -- plpgsql: its plan is kept for the session (it runs on every fast recall)
    SET search_path = memvault, public, pg_catalog
    SET enable_seqscan = off  -- every step is a keyed lookup; a stale "empty table" estimate must not scan
    AS $$
#variable_conflict use_column
DECLARE
    v_vault uuid := memvault.current_vault_id();
BEGIN
    -- Each step looks up what the step before found, by index (LATERAL ... OFFSET 0 keeps that order). Joined
    -- freely, the planner, told by stale statistics that the turn table was empty (a vault written a moment ago,
    -- before autovacuum's ANALYZE), looped over every turn of the vault for every turn: 2.1 s a call instead of
    -- 10 ms, for the first recalls after an import.
    RETURN QUERY
    WITH pt AS MATERIALIZED (  -- the hits' own turns
        SELECT p.id AS parent_id, p.ord, t.session_id, t.seq
        FROM unnest(p_ids) WITH ORDINALITY AS p(id, ord)
        CROSS JOIN LATERAL (SELECT b.source_turn_ids FROM memvault.block b
                            WHERE b.vault_id = v_vault AND b.id = p.id OFFSET 0) b
        CROSS JOIN LATERAL (SELECT t.session_id, t.seq FROM memvault.turn t
                            WHERE t.vault_id = v_vault AND t.id = ANY (b.source_turn_ids) OFFSET 0) t
    ), nt AS MATERIALIZED (  -- the turns around them, each once: nearest first, then the better hit
        SELECT DISTINCT ON (n.id) n.id AS turn_id, pt.session_id, pt.parent_id, abs(n.seq - pt.seq) AS distance
        FROM pt
        CROSS JOIN LATERAL (SELECT t.id, t.seq FROM memvault.turn t
                            WHERE t.vault_id = v_vault AND t.session_id = pt.session_id
                              AND t.seq BETWEEN pt.seq - p_window AND pt.seq + p_window AND t.seq <> pt.seq
                            OFFSET 0) n
        ORDER BY n.id, abs(n.seq - pt.seq), pt.ord
    )
    SELECT DISTINCT ON (c.id) c.id, nt.parent_id, nt.distance
    FROM nt
    CROSS JOIN LATERAL (SELECT b.id FROM memvault.block_source s
                        JOIN memvault.block b ON b.vault_id = s.vault_id AND b.id = s.block_id
                        WHERE s.vault_id = v_vault AND s.turn_id = nt.turn_id  -- the turn's chunk, by provenance
                          AND b.session_id = nt.session_id AND b.kind = 'chunk'
                          AND b.source_turn_ids @> ARRAY[nt.turn_id] AND b.id <> ALL (p_ids)
                        OFFSET 0) c
    ORDER BY c.id, nt.distance;
END
$$;
