-- The write track's mutations. Bodies are strings, not BEGIN ATOMIC: an atomic body would pin the
-- embedding column's type, which configure_embedder_v1() and reembed must be able to change.
-- The model decides, these functions apply (STYLE 7): every decision of
-- Dedup (CREATE / SKIP / MERGE / SUPERSEDE) and every rejection is one call here, audited.

-- Nearest current blocks of each incoming item of a batch, set-based: dense cosine plus exact normalized-hash
-- hits. Layers never dedupe against each other: raw turn chunks (the archive), session summaries, and curated
-- memories/units (p_layers: 'chunk', 'summary', anything else curated).
-- ``nearest`` rows are each item's p_k nearest current blocks of its layer at or above p_min_cosine (ranked by
-- cosine, then id), the other rows are exact normalized-hash hits only. The write track asks for a few more than
-- Dedup's k, so it can take away the blocks an earlier item of the same batch merged into or superseded and still
-- hold the k nearest (app/write/batch.py). A vault below p_exact_below blocks (or without its own HNSW index yet,
-- 012-ann-index.sql) is scanned once for the whole batch: every block of the vault against every item in one join
-- (20 items over 8,000 blocks: 186-274 ms against 282-462 ms for the per-item scans of v2, dropped by revision
-- 0024). A larger vault is searched through its own partial HNSW index with iterative scans, one scan per item.
-- No JIT: the scan's estimate (every block of the vault times every item) passes jit_above_cost, and compiling it
-- cost more than running it: 25 items over 1,800 blocks, 56 ms a call with the cluster's JIT on, 35 without
-- (the compile is paid at every call: the statement is planned at each one).
-- The exact scan's pairs are screened by inner product (one multiply-add a dimension, against cosine's three) and
-- only the pairs that pass get the cosine that ranks and cuts them, the same expression as before: the screen
-- keeps every pair whose cosine can reach p_min_cosine (inner product >= (p_min_cosine - 0.001) x both norms, each
-- norm computed once per block or item; the float32 sums of the two operators differ by ~1e-6 of the norms at
-- most), so the rows are v3's as it was, bit for bit, for vectors of any length (a zero vector's NaN cosine
-- included: its inner product 0 passes a bound of 0). The vault's blocks are read once, of the batch's layers
-- only (an append's chunks skip the units and summaries). 26 items over 1,800 blocks: 12-13 -> 7.5-9 ms of
-- backend CPU a call; 20 chunks: 10-13 -> 6-8 ms (docs/benchmarks.md, "Session close, round 3").
-- The rows returned are read again by their address (ctid, taken where the candidate was found, in the same
-- statement and snapshot: a Tid Scan per candidate), not joined by (vault_id, id): a vault that is not among the
-- statistics' vault ids (created or grown since block was last analyzed; in the benchmark's database, every vault,
-- the statistics describing the previous run's, dropped) is estimated at one row, and that join became a nested
-- loop over the whole vault, materialized and re-read once per candidate (65 x ~1,250 rows of ~2.9 kB), or an
-- index scan of block_session_idx per candidate (every index starting with vault_id costs the same at one row).
-- ~1 ms of PostgreSQL CPU a turn of `bench ingest --close-sessions` once autovacuum had analyzed the benchmark's
-- database (docs/benchmarks.md, "Session close, round 5").
CREATE OR REPLACE FUNCTION memvault.dedup_candidates_v3(
    p_vault       uuid,
    p_embeddings  vector[],
    p_hashes      bytea[],
    p_layers      text[],
    p_k           integer DEFAULT 3,
    p_min_cosine  real DEFAULT 0.75,
    p_exact_below integer DEFAULT 5000
)
    RETURNS TABLE (item integer, block_id bigint, cosine real, kind text, category text, content text,
                   normalized text, fingerprint bigint, same_hash boolean, valid_at timestamptz, nearest boolean)
    LANGUAGE plpgsql STABLE
    SET search_path = memvault, public, pg_catalog
    SET hnsw.iterative_scan = 'relaxed_order'
    SET jit = off
    AS $$
DECLARE
    v_exact boolean;
    v_kinds text[];  -- the block kinds any item of the batch is compared with
BEGIN
    SELECT array_agg(DISTINCT k) INTO v_kinds
      FROM unnest(p_layers) AS l(layer),
           unnest(CASE WHEN l.layer IN ('chunk', 'summary') THEN ARRAY[l.layer] ELSE ARRAY['memory', 'unit'] END) AS k;
    SELECT count(*) <= p_exact_below INTO v_exact
      FROM (SELECT 1 FROM memvault.block b WHERE b.vault_id = p_vault LIMIT p_exact_below + 1) s;
    v_exact := v_exact OR NOT memvault.has_ann_index_v1(p_vault);
    -- Dynamic SQL planned at each call with the current statistics.
    RETURN QUERY EXECUTE format($q$
    WITH i AS (
        SELECT x.emb, x.h, x.ord::integer AS ord,
               CASE WHEN x.layer IN ('chunk', 'summary') THEN ARRAY[x.layer] ELSE ARRAY['memory', 'unit'] END AS kinds,
               -($6 - 0.001) * vector_norm(x.emb) AS bound  -- the inner-product screen's, over the block's norm
          FROM unnest($2, $3, $4) WITH ORDINALITY AS x(emb, h, layer, ord)
    ), near AS (%s
    ), hits AS (
        SELECT u.ord, u.id, u.tid, bool_or(u.nearest) AS nearest FROM (
            SELECT n.ord, n.id, n.tid, true AS nearest FROM near n
            UNION ALL
            SELECT i.ord, b.id, b.ctid, false
              FROM i JOIN memvault.block b
                ON b.vault_id = $1 AND b.content_hash = i.h AND b.retracted_at IS NULL AND b.invalid_at IS NULL
               AND b.kind = ANY (i.kinds)
        ) u GROUP BY u.ord, u.id, u.tid
    )
    SELECT i.ord, b.id, (1 - (b.embedding <=> i.emb))::real, b.kind, b.category, b.content, b.normalized,
           b.fingerprint, b.content_hash = i.h, b.valid_at, h.nearest
      FROM hits h JOIN i ON i.ord = h.ord CROSS JOIN LATERAL (
        SELECT b.id, b.embedding, b.kind, b.category, b.content, b.normalized, b.fingerprint, b.content_hash,
               b.valid_at
          FROM memvault.block b WHERE b.ctid = h.tid AND b.vault_id = $1 AND b.id = h.id
        OFFSET 0) b
     ORDER BY 1, 3 DESC, 2
    $q$,
    CASE WHEN v_exact THEN format($near$
        -- One pass over the vault's blocks of the batch's layers (each block's norm computed once) for every item;
        -- the pairs the inner product screens in get their cosine, once each (OFFSET 0 keeps each step apart).
        SELECT r.ord, r.id, r.tid FROM (
            SELECT d.ord, d.id, d.tid, row_number() OVER (PARTITION BY d.ord ORDER BY d.cosine DESC, d.id) AS rn
              FROM (SELECT p.ord, p.id, p.tid, (1 - (p.embedding <=> p.emb))::real AS cosine
                      FROM (SELECT i.ord, b.id, b.tid, b.embedding, i.emb
                              FROM i JOIN (SELECT b.id, b.ctid AS tid, b.kind, b.embedding,
                                                  vector_norm(b.embedding) AS norm
                                             FROM memvault.block b
                                            WHERE b.vault_id = %L::uuid AND b.retracted_at IS NULL
                                              AND b.invalid_at IS NULL AND b.kind = ANY ($7)
                                           OFFSET 0) b
                                ON b.kind = ANY (i.kinds)
                             WHERE (b.embedding <#> i.emb) <= i.bound * b.norm
                            OFFSET 0) p) d
             WHERE d.cosine >= $6) r
         WHERE r.rn <= $5$near$, p_vault)
    ELSE format($near$
        -- The vault's own HNSW index (the vault as a literal, so the planner matches the partial index).
        SELECT i.ord, c.id, c.tid FROM i CROSS JOIN LATERAL (
            SELECT b.id, b.ctid AS tid, b.embedding <=> i.emb AS dist
              FROM memvault.block b
             WHERE b.vault_id = %L::uuid AND b.retracted_at IS NULL AND b.invalid_at IS NULL
               AND b.kind = ANY (i.kinds)
             ORDER BY b.embedding <=> i.emb
             LIMIT $5) c
         WHERE (1 - c.dist)::real >= $6$near$, p_vault)
    END)
    USING p_vault, p_embeddings, p_hashes, p_layers, p_k, p_min_cosine, v_kinds;
END
$$;

-- The rows of dedup_candidates_v3 when the caller already knows which blocks are near each item (the bulk path's
-- in-memory copy of the vault's vectors, app/write/mirror.py, searched exactly by one matrix product per batch):
-- p_items / p_ids pair an item (1-based, as in the other arrays) with a block it may be near. The pairs' cosines
-- are computed here as v3 computes them, blocks no longer current or of another layer are left out, and each
-- item keeps its p_k nearest at or above p_min_cosine (cosine, then id), plus its exact normalized-hash hits,
-- exactly as v3 ranks, cuts and marks them: the same rows as v3 whenever the pairs hold v3's nearest blocks.
-- An item's vector, hash and layer are read by subscript (p_embeddings[ord]), never by joining the pairs to the
-- unnested items on ord: PostgreSQL 17 plans a SQL function's statement without its arguments, so it takes every
-- unnest for 10 rows, and a join on ord was then a nested loop that scanned all the batch's items for every pair
-- whenever block had no statistics yet (a new vault's table before autovacuum's first ANALYZE: 500 items x 3,500
-- pairs = 1.75M rows, ~0.26 s a batch of the bulk path), a hash join once it had them: the bulk path's PostgreSQL
-- CPU a memory doubled in the runs whose first ANALYZE came late (docs/benchmarks.md, branch bulk7). Left are
-- index lookups of block by key and by hash, whatever block's statistics say
-- (tests/integration/test_dedup_candidate_plans.py).
CREATE OR REPLACE FUNCTION memvault.dedup_candidate_rows_v1(
    p_vault       uuid,
    p_items       integer[],
    p_ids         bigint[],
    p_embeddings  vector[],
    p_hashes      bytea[],
    p_layers      text[],
    p_k           integer DEFAULT 3,
    p_min_cosine  real DEFAULT 0.75
)
    RETURNS TABLE (item integer, block_id bigint, cosine real, kind text, category text, content text,
                   normalized text, fingerprint bigint, same_hash boolean, valid_at timestamptz, nearest boolean)
    LANGUAGE sql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
    WITH near AS (  -- a pair whose item is not in p_embeddings has no cosine and is left out, as by a join
        SELECT r.ord, r.id FROM (
            SELECT d.ord, d.id, row_number() OVER (PARTITION BY d.ord ORDER BY d.cosine DESC, d.id) AS rn
              FROM (SELECT pr.ord, b.id, (1 - (b.embedding <=> p_embeddings[pr.ord]))::real AS cosine
                      FROM unnest(p_items, p_ids) AS pr(ord, id)
                      JOIN memvault.block b
                        ON b.vault_id = p_vault AND b.id = pr.id AND b.retracted_at IS NULL AND b.invalid_at IS NULL
                       AND b.kind = ANY (CASE WHEN p_layers[pr.ord] IN ('chunk', 'summary')
                                              THEN ARRAY[p_layers[pr.ord]] ELSE ARRAY['memory', 'unit'] END)) d
             WHERE d.cosine >= p_min_cosine) r
         WHERE r.rn <= p_k
    ), hits AS (
        SELECT u.ord, u.id, bool_or(u.nearest) AS nearest FROM (
            SELECT n.ord, n.id, true AS nearest FROM near n
            UNION ALL
            SELECT x.ord::integer, b.id, false
              FROM unnest(p_embeddings, p_hashes, p_layers) WITH ORDINALITY AS x(emb, h, layer, ord)
              JOIN memvault.block b
                ON b.vault_id = p_vault AND b.content_hash = x.h AND b.retracted_at IS NULL AND b.invalid_at IS NULL
               AND b.kind = ANY (CASE WHEN x.layer IN ('chunk', 'summary') THEN ARRAY[x.layer]
                                      ELSE ARRAY['memory', 'unit'] END)
        ) u GROUP BY u.ord, u.id
    )
    SELECT h.ord, b.id, (1 - (b.embedding <=> p_embeddings[h.ord]))::real, b.kind, b.category, b.content,
           b.normalized, b.fingerprint, b.content_hash = p_hashes[h.ord], b.valid_at, h.nearest
      FROM hits h JOIN memvault.block b ON b.vault_id = p_vault AND b.id = h.id
     ORDER BY 1, 3 DESC, 2
$$;

-- The current blocks Dedup compares with (chunks, summaries, memories, units) of a vault above a block id, with
-- their Dedup layer (as dedup_candidates_v3 reads p_layers: 'chunk', 'summary', 'curated') and vectors: what the
-- bulk path's in-memory copy of the vault adds before each batch (app/write/mirror.py).
-- Planned for the id it is given (EXECUTE): a generic plan cannot tell "the last batch's 500 blocks" from "every
-- block of the vault" and, as a SQL function, scanned the whole table and sorted it (0.4 s a batch at 145k blocks,
-- growing with the vault) where the primary key's range scan takes ~1 ms.
CREATE OR REPLACE FUNCTION memvault.dedup_vectors_since_v2(p_vault uuid, p_after bigint)
    RETURNS TABLE (id bigint, layer text, embedding vector)
    LANGUAGE plpgsql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
BEGIN
    RETURN QUERY EXECUTE
        'SELECT b.id, CASE WHEN b.kind IN (''chunk'', ''summary'') THEN b.kind ELSE ''curated'' END, b.embedding
           FROM memvault.block b
          WHERE b.vault_id = $1 AND b.id > $2 AND b.retracted_at IS NULL AND b.invalid_at IS NULL
            AND b.kind IN (''chunk'', ''summary'', ''memory'', ''unit'') AND b.embedding IS NOT NULL
          ORDER BY b.id'
        USING p_vault, p_after;
END
$$;

-- One Dedup at a time per vault: a write's read of its candidates, its decision and its apply happen in one
-- transaction that first takes this lock (released at commit or rollback). Without it, 16 identical writes sent at
-- once each read a vault without the others' block and each created one. Keyed by the vault (as lexeme_stats and
-- centrality key theirs): writes to other vaults never wait; two vaults whose ids hash alike only share a turn.
-- Why an advisory lock rather than another way to serialize: app/write/serial.py.
CREATE OR REPLACE FUNCTION memvault.lock_vault_writes_v1(p_vault uuid)
    RETURNS void
    LANGUAGE sql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
        SELECT pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('memvault.write'),
                                                pg_catalog.hashtext(p_vault::text))
$$;

-- Block ids for a batch, drawn before it is decided, so an item can name the block an earlier item of the same
-- batch will create (Dedup's reasons and targets) exactly as it would after that item was written alone.
CREATE OR REPLACE FUNCTION memvault.allocate_block_ids_v1(p_count integer)
    RETURNS SETOF bigint
    LANGUAGE sql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
        SELECT nextval(pg_catalog.pg_get_serial_sequence('memvault.block', 'id'))
          FROM generate_series(1, p_count)
$$;

-- CREATE, batched, with the ids drawn by allocate_block_ids_v1 (positions align p_ids, p_items, p_embeddings).
CREATE OR REPLACE FUNCTION memvault.insert_blocks_v2(p_vault uuid, p_ids bigint[], p_items jsonb,
                                                     p_embeddings vector[])
    RETURNS integer
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
DECLARE
    v_count integer;
BEGIN
    INSERT INTO memvault.block (id, vault_id, kind, category, content, normalized, norm_spans, summary,
        embedding, tsv, fingerprint, content_hash, lang, token_count, session_id, source_kind,
        trust_score, confidence, source_turn_ids, quarantine_tags, valid_at, metadata)
    OVERRIDING SYSTEM VALUE
    SELECT p_ids[x.ord], p_vault, j->>'kind', j->>'category', j->>'content', j->>'normalized',
           coalesce(j->'norm_spans', '[]'::jsonb), j->>'summary', p_embeddings[x.ord],
           memvault.sparse_document_v1(concat_ws(' ', j->>'content', nullif(j->>'normalized', j->>'content'),
                                                 j->'metadata'->>'context')),
           (j->>'fingerprint')::bigint, decode(j->>'content_hash', 'hex'), j->>'lang',
           coalesce((j->>'token_count')::integer, 0), j->>'session_id', j->>'source_kind',
           (j->>'trust_score')::real, (j->>'confidence')::real,
           coalesce(ARRAY(SELECT jsonb_array_elements_text(j->'source_turn_ids'))::bigint[], '{}'),
           coalesce(ARRAY(SELECT jsonb_array_elements_text(j->'quarantine_tags')), '{}'),
           (j->>'valid_at')::timestamptz, coalesce(j->'metadata', '{}'::jsonb)
      FROM jsonb_array_elements(p_items) WITH ORDINALITY AS x(j, ord)
     ORDER BY x.ord;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    RETURN v_count;
END
$$;

-- MERGE and SUPERSEDE of a batch, applied in the batch's order after its CREATEs (one call; a merge's vector is
-- p_embeddings[its "vector" field]): the same rows and history as applying them one write at a time.
-- Each revision changes the row Dedup read or nothing: its target must still be current (neither retracted nor
-- superseded) and, when the revision carries "expected", still hold that content (what Dedup compared the new
-- text with, or what an earlier revision of the batch wrote into it). A target that changed meanwhile (a writer
-- that does not take the vault's write lock: a dream, an edit, a deletion) raises MVSTL, and the write track
-- decides again on what the vault now holds (app/write/serial.py): a zero-row revision is never passed over.
CREATE OR REPLACE FUNCTION memvault.revise_blocks_v1(p_vault uuid, p_revisions jsonb, p_embeddings vector[])
    RETURNS integer
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
DECLARE
    r record;
    v_target bigint;
    v_done bigint;
    v_count integer := 0;
BEGIN
    FOR r IN SELECT x.j, x.ord::integer AS ord FROM jsonb_array_elements(p_revisions) WITH ORDINALITY AS x(j, ord)
             ORDER BY x.ord LOOP
        v_target := (r.j->>'target')::bigint;
        PERFORM 1 FROM memvault.block b
         WHERE b.vault_id = p_vault AND b.id = v_target AND b.retracted_at IS NULL AND b.invalid_at IS NULL
           AND (NOT r.j ? 'expected' OR b.content = r.j->>'expected')
           FOR NO KEY UPDATE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'block % changed after Dedup read it (% of revision %)', v_target, r.j->>'action', r.ord
                USING ERRCODE = 'MVSTL', HINT = 'decide again on what the vault holds now';
        END IF;
        IF r.j->>'action' = 'MERGE' THEN
            v_done := memvault.merge_block_v1(p_vault, v_target, r.j->>'content', r.j->>'normalized',
                                              p_embeddings[(r.j->>'vector')::integer], (r.j->>'fingerprint')::bigint,
                                              decode(r.j->>'content_hash', 'hex'), (r.j->>'confidence')::real,
                                              (r.j->>'token_count')::integer);
        ELSE
            v_done := memvault.supersede_block_v1(p_vault, v_target, (r.j->>'block_id')::bigint);
        END IF;
        IF v_done IS NULL THEN  -- a SUPERSEDE whose new block is not in the vault: the caller's bug, not a race
            RAISE EXCEPTION '% of block % changed no row (revision %)', r.j->>'action', v_target, r.ord;
        END IF;
        v_count := v_count + 1;
    END LOOP;
    RETURN v_count;
END
$$;

-- Provenance: one more place a memory was said (CREATE, SKIP, MERGE and SUPERSEDE all record theirs).
CREATE OR REPLACE FUNCTION memvault.record_sources_v1(p_vault uuid, p_sources jsonb)
    RETURNS integer
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
DECLARE
    v_count integer;
BEGIN
    INSERT INTO memvault.block_source (vault_id, block_id, turn_id, session_id, source_kind, said_at, decision)
    SELECT p_vault, (s->>'block_id')::bigint, (s->>'turn_id')::bigint, s->>'session_id', s->>'source_kind',
           (s->>'said_at')::timestamptz, s->>'decision'
      FROM jsonb_array_elements(p_sources) AS s;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    -- Keep the block's own list of source turns in step (SKIP/MERGE add the repeating turn).
    UPDATE memvault.block b
       SET source_turn_ids = (SELECT array_agg(DISTINCT t ORDER BY t)
                                FROM unnest(b.source_turn_ids || n.turns) AS t WHERE t IS NOT NULL)
      FROM (SELECT (s->>'block_id')::bigint AS block_id, array_agg((s->>'turn_id')::bigint) AS turns
              FROM jsonb_array_elements(p_sources) AS s
             WHERE s->>'turn_id' IS NOT NULL AND s->>'decision' <> 'CREATE'
             GROUP BY 1) n
     WHERE b.vault_id = p_vault AND b.id = n.block_id;
    RETURN v_count;
END
$$;

-- MERGE: the existing block takes the merged content; embedding and tsvector are recomputed, the
-- previous version goes to block_history (trigger), and the confidence is the larger of the two.
CREATE OR REPLACE FUNCTION memvault.merge_block_v1(
    p_vault uuid, p_block_id bigint, p_content text, p_normalized text, p_embedding vector,
    p_fingerprint bigint, p_content_hash bytea, p_confidence real, p_token_count integer
)
    RETURNS bigint
    LANGUAGE sql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
        UPDATE memvault.block
           SET content = p_content, normalized = p_normalized, embedding = p_embedding,
               tsv = memvault.sparse_document_v1(CASE WHEN p_normalized = p_content THEN p_content
                                                      ELSE p_content || ' ' || p_normalized END),
               fingerprint = p_fingerprint, content_hash = p_content_hash,
               confidence = greatest(confidence, p_confidence), token_count = p_token_count
         WHERE vault_id = p_vault AND id = p_block_id AND retracted_at IS NULL
        RETURNING id;
$$;

-- SUPERSEDE: the old block stops being valid when the new one starts; nothing is deleted.
CREATE OR REPLACE FUNCTION memvault.supersede_block_v1(p_vault uuid, p_old_id bigint, p_new_id bigint)
    RETURNS bigint
    LANGUAGE sql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
        UPDATE memvault.block o
           SET invalid_at = greatest(n.valid_at, o.valid_at), superseded_by = n.id
          FROM memvault.block n
         WHERE o.vault_id = p_vault AND o.id = p_old_id AND n.vault_id = p_vault AND n.id = p_new_id
           AND o.invalid_at IS NULL
        RETURNING o.id;
$$;

-- DELETE: the block is retracted (transaction time ends); its history and sources stay.
CREATE OR REPLACE FUNCTION memvault.retract_block_v1(p_vault uuid, p_block_id bigint)
    RETURNS bigint
    LANGUAGE sql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
        UPDATE memvault.block SET retracted_at = clock_timestamp()
         WHERE vault_id = p_vault AND id = p_block_id AND retracted_at IS NULL
        RETURNING id;
$$;

-- Audit entries, batched (rejections carry the rule and the ruleset version).
CREATE OR REPLACE FUNCTION memvault.audit_v1(p_vault uuid, p_entries jsonb)
    RETURNS integer
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
DECLARE
    v_count integer;
BEGIN
    INSERT INTO memvault.audit_log (vault_id, actor, action, block_id, rule, ruleset_version, detail)
    SELECT p_vault, coalesce(e->>'actor', memvault.audit_actor()), e->>'action', (e->>'block_id')::bigint, e->>'rule',
           e->>'ruleset_version', coalesce(e->'detail', '{}'::jsonb)
      FROM jsonb_array_elements(p_entries) AS e;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    RETURN v_count;
END
$$;

-- Every version of one block, newest first: the current row, then block_history.
CREATE OR REPLACE FUNCTION memvault.block_versions_v1(p_vault uuid, p_block_id bigint)
    RETURNS TABLE (version integer, content text, category text, valid_at timestamptz, invalid_at timestamptz,
                   superseded_by bigint, recorded_at timestamptz, replaced_at timestamptz,
                   retracted_at timestamptz)
    LANGUAGE sql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
        SELECT b.version, b.content, b.category, b.valid_at, b.invalid_at, b.superseded_by, b.recorded_at,
               NULL::timestamptz, b.retracted_at
          FROM memvault.block b WHERE b.vault_id = p_vault AND b.id = p_block_id
        UNION ALL
        SELECT h.version, h.content, h.category, h.valid_at, h.invalid_at, h.superseded_by, h.recorded_at,
               h.replaced_at, h.retracted_at
          FROM memvault.block_history h WHERE h.vault_id = p_vault AND h.id = p_block_id
        ORDER BY 1 DESC;
$$;

-- What the vault believed on date p_known_at about what was true at p_valid_at: one query over the
-- current rows and their earlier versions (bitemporal).
CREATE OR REPLACE FUNCTION memvault.blocks_believed_v1(p_vault uuid, p_valid_at timestamptz,
                                                       p_known_at timestamptz)
    RETURNS TABLE (id bigint, version integer, content text, category text, valid_at timestamptz,
                   invalid_at timestamptz, recorded_at timestamptz)
    LANGUAGE sql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
        SELECT v.id, v.version, v.content, v.category, v.valid_at, v.invalid_at, v.recorded_at
          FROM (
              SELECT b.id, b.version, b.content, b.category, b.valid_at, b.invalid_at, b.recorded_at,
                     'infinity'::timestamptz AS replaced_at, b.retracted_at
                FROM memvault.block b WHERE b.vault_id = p_vault
              UNION ALL
              SELECT h.id, h.version, h.content, h.category, h.valid_at, h.invalid_at, h.recorded_at,
                     h.replaced_at, h.retracted_at
                FROM memvault.block_history h WHERE h.vault_id = p_vault
          ) v
         WHERE v.recorded_at <= p_known_at AND p_known_at < v.replaced_at
           AND (v.retracted_at IS NULL OR v.retracted_at > p_known_at)
           AND v.valid_at <= p_valid_at AND (v.invalid_at IS NULL OR v.invalid_at > p_valid_at)
         ORDER BY v.id;
$$;

-- Closing a session records its summary and thread map; the session then takes no more turns.
CREATE OR REPLACE FUNCTION memvault.close_session_v1(p_vault uuid, p_session text, p_summary text,
                                                     p_thread_map jsonb)
    RETURNS timestamptz
    LANGUAGE sql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
        UPDATE memvault.session
           SET closed_at = clock_timestamp(), summary = p_summary, thread_map = p_thread_map
         WHERE vault_id = p_vault AND id = p_session AND closed_at IS NULL
        RETURNING closed_at;
$$;
