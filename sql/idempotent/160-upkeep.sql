-- Upkeep of a long-running database: the monthly partitions of the logs (made ahead, dropped past retention) and
-- what vacuum and index bloat look like (`memvault db stats`, /health). Run by the worker's daily job
-- (app/background/log_partitions.py) as memvault_service through SECURITY DEFINER (990-service-role.sql).

-- The logs' monthly partitions as of p_now: this month and p_months_ahead more are made (rows of such a month that
-- already sit in the default partition are moved into it: recall_log only, audit_log is append-only and never has
-- a row deleted, so such a month is reported 'blocked' and its rows stay in the default partition, still queried);
-- a month older than p_keep_months[log] full months before p_now's month is dropped (0 or absent: kept forever).
-- One row per action. p_now is a parameter so that a test can move the clock.
CREATE OR REPLACE FUNCTION memvault.maintain_log_partitions_v1(
    p_now          timestamptz DEFAULT now(),
    p_months_ahead integer DEFAULT 2,
    p_keep_months  jsonb DEFAULT '{"recall_log": 12, "audit_log": 0}'::jsonb
)
    RETURNS TABLE (log text, partition text, action text, moved_rows bigint)
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    v_log   text;
    v_start date;
    v_end   date;
    v_name  text;
    v_keep  integer;
    v_cut   date;
    v_part  record;
BEGIN
    IF p_months_ahead IS NULL OR p_months_ahead < 0 OR p_months_ahead > 24 THEN
        RAISE EXCEPTION 'months ahead: between 0 and 24 (got %)', p_months_ahead USING ERRCODE = 'MV422';
    END IF;
    FOREACH v_log IN ARRAY ARRAY['recall_log', 'audit_log'] LOOP
        FOR i IN 0 .. p_months_ahead LOOP
            v_start := (date_trunc('month', p_now) + make_interval(months => i))::date;
            v_end := (v_start + interval '1 month')::date;
            v_name := format('%s_%s', v_log, to_char(v_start, 'YYYYMM'));
            CONTINUE WHEN to_regclass(format('memvault.%I', v_name)) IS NOT NULL;
            log := v_log; partition := v_name; moved_rows := 0;
            BEGIN
                EXECUTE format('CREATE TABLE memvault.%I PARTITION OF memvault.%I FOR VALUES FROM (%L) TO (%L)',
                               v_name, v_log, v_start, v_end);
                action := 'created';
            EXCEPTION WHEN check_violation THEN  -- the default partition holds rows of that month
                IF v_log = 'audit_log' THEN
                    action := 'blocked';
                ELSE
                    EXECUTE format('CREATE TABLE memvault.%I (LIKE memvault.%I INCLUDING DEFAULTS)', v_name, v_log);
                    EXECUTE format('WITH moved AS (DELETE FROM memvault.%I WHERE at >= %L AND at < %L RETURNING *) '
                                   'INSERT INTO memvault.%I SELECT * FROM moved', v_log || '_default', v_start,
                                   v_end, v_name);
                    GET DIAGNOSTICS moved_rows = ROW_COUNT;
                    EXECUTE format('ALTER TABLE memvault.%I ATTACH PARTITION memvault.%I FOR VALUES FROM (%L) TO (%L)',
                                   v_log, v_name, v_start, v_end);
                    action := 'created';
                END IF;
            END;
            RETURN NEXT;
        END LOOP;

        v_keep := coalesce((p_keep_months ->> v_log)::integer, 0);
        CONTINUE WHEN v_keep <= 0;
        v_cut := (date_trunc('month', p_now) - make_interval(months => v_keep))::date;
        FOR v_part IN
            SELECT c.relname FROM pg_catalog.pg_inherits i JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid
             WHERE i.inhparent = format('memvault.%I', v_log)::regclass
               AND c.relname ~ ('^' || v_log || '_[0-9]{6}$')
               AND to_date(right(c.relname, 6), 'YYYYMM') < v_cut
             ORDER BY c.relname
        LOOP
            EXECUTE format('DROP TABLE memvault.%I', v_part.relname);
            log := v_log; partition := v_part.relname; action := 'dropped'; moved_rows := 0;
            RETURN NEXT;
        END LOOP;
    END LOOP;
END
$$;

-- Tables and indexes of the memvault schema with their size, dead rows and last vacuum / analyze, and for B-tree
-- indexes an estimate of their bloat: the share of their pages beyond what their rows need at the default fill
-- factor (90%), from the planner's row counts and column widths (the estimate the usual monitoring queries make;
-- pgstattuple measures it exactly, but needs an extension). HNSW and GIN indexes report size and scans only: they
-- shrink only by REINDEX, and dead heap rows (dead_rows of their table) are what the next vacuum removes from them.
-- SECURITY DEFINER: pg_stats hides the columns of tables under row-level security from other roles.
CREATE OR REPLACE FUNCTION memvault.db_stats_v1()
    RETURNS TABLE (kind text, name text, table_name text, bytes bigint, live_rows bigint, dead_rows bigint,
                   dead_ratio double precision, est_bloat_ratio double precision, scans bigint,
                   last_vacuum timestamptz, last_analyze timestamptz, vacuum_count bigint)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT 'table', s.relname::text, s.relname::text, pg_total_relation_size(s.relid), s.n_live_tup, s.n_dead_tup,
           CASE WHEN s.n_live_tup + s.n_dead_tup > 0
                THEN s.n_dead_tup::float8 / (s.n_live_tup + s.n_dead_tup) END,
           NULL::float8, s.seq_scan + coalesce(s.idx_scan, 0),
           greatest(s.last_vacuum, s.last_autovacuum), greatest(s.last_analyze, s.last_autoanalyze),
           s.vacuum_count + s.autovacuum_count
      FROM pg_catalog.pg_stat_user_tables s
     WHERE s.schemaname = 'memvault'
    UNION ALL
    SELECT 'index', i.indexrelname::text, i.relname::text, pg_relation_size(i.indexrelid), ic.reltuples::bigint,
           NULL, NULL,
           CASE WHEN am.amname = 'btree' AND ic.relpages > 10 AND w.width IS NOT NULL
                THEN greatest(0.0, 1.0 - (ceil(ic.reltuples * (w.width + 16) / (8192 * 0.9)) + 1)
                                         / ic.relpages) END,
           i.idx_scan, NULL, NULL, NULL
      FROM pg_catalog.pg_stat_user_indexes i
      JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
      JOIN pg_catalog.pg_am am ON am.oid = ic.relam
      LEFT JOIN LATERAL (
            -- the index's key width: the average width of each of its columns (NULL if one is an expression)
            SELECT CASE WHEN bool_and(st.avg_width IS NOT NULL) THEN sum(st.avg_width) END AS width
              FROM pg_catalog.pg_index x
              CROSS JOIN LATERAL unnest(x.indkey) AS k(attnum)
              LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
              LEFT JOIN pg_catalog.pg_stats st ON st.schemaname = 'memvault' AND st.tablename = i.relname
                                             AND st.attname = a.attname
             WHERE x.indexrelid = i.indexrelid) w ON true
     WHERE i.schemaname = 'memvault'
$$;

-- /health's summary: tables whose dead rows are over a fifth of them (and over 1,000), the worst of those with over
-- 1,000 rows, how many
-- months ahead both logs have partitions, and the rows sitting in their default partitions (planner estimate).
CREATE OR REPLACE FUNCTION memvault.upkeep_summary_v1(p_now timestamptz DEFAULT now())
    RETURNS TABLE (tables_needing_vacuum integer, worst_table text, worst_dead_ratio double precision,
                   log_months_ahead integer, default_partition_rows bigint, never_vacuumed integer)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    WITH t AS (
        SELECT s.relname::text AS name, s.n_dead_tup, s.n_live_tup + s.n_dead_tup AS n,
               s.n_dead_tup::float8 / nullif(s.n_live_tup + s.n_dead_tup, 0) AS r,
               coalesce(s.last_vacuum, s.last_autovacuum) IS NULL AND s.n_live_tup + s.n_dead_tup > 1000 AS never
          FROM pg_catalog.pg_stat_user_tables s WHERE s.schemaname = 'memvault'),
    ahead AS (
        SELECT l.log, count(*) FILTER (WHERE to_date(right(c.relname, 6), 'YYYYMM') > date_trunc('month', p_now))
                   AS months
          FROM unnest(ARRAY['recall_log', 'audit_log']) AS l(log)
          LEFT JOIN pg_catalog.pg_inherits i ON i.inhparent = format('memvault.%I', l.log)::regclass
          LEFT JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid AND c.relname ~ ('^' || l.log || '_[0-9]{6}$')
         GROUP BY l.log)
    SELECT (SELECT count(*)::integer FROM t WHERE r > 0.2 AND n_dead_tup > 1000),
           (SELECT name FROM t WHERE n > 1000 ORDER BY r DESC NULLS LAST, name LIMIT 1),
           (SELECT max(r) FROM t WHERE n > 1000),
           (SELECT min(months)::integer FROM ahead),
           (SELECT sum(greatest(c.reltuples, 0))::bigint FROM pg_catalog.pg_class c
             WHERE c.oid IN ('memvault.recall_log_default'::regclass, 'memvault.audit_log_default'::regclass)),
           (SELECT count(*)::integer FROM t WHERE never)
$$;
