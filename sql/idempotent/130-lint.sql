-- Knowledge lint (seed 004), four levels from cheap to expensive; app/background/lint.py. Levels 1 and 2 are here:
-- structure rules and grounding against the canonical predicates. Level 3 (the lint_judge task) adds its findings
-- through lint_add_v1; level 4, the three-stage confirmation, is lint_mark_v1 (mark: queued for review) ->
-- lint_commit_v1 (check that the finding still holds, then commit its fix). Re-applied by every migration.

-- Levels 1 and 2 over the current vault's valid triples; each finding once ever (rule, key). Rules:
--   self_loop          a triple whose subject is its object                          fix: invalidate_triple
--   malformed_triple   a predicate not snake_case, or an end whose name is empty or
--                      longer than p_max_name characters                             fix: invalidate_triple
--   dangling_evidence  a valid triple whose evidence memory is superseded or
--                      retracted (the fact lost its ground)                          fix: invalidate_triple
--   cycle              A p B and B p A for an asymmetric canonical predicate (domain
--                      and range differ, or is_a): the newer of the two             fix: invalidate_triple
--   domain_mismatch    a canonical predicate whose subject is typed otherwise (by its
--   range_mismatch     other roles) than the predicate's domain / range              no fix (reported)
--   unknown_predicate  a predicate with no canonical definition (one per predicate)   no fix (reported)
-- Returns the new findings by rule.
CREATE OR REPLACE FUNCTION memvault.lint_scan_v1(p_run bigint, p_max_name integer DEFAULT 120)
    RETURNS TABLE (rule text, found integer)
    LANGUAGE sql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
    WITH v AS (SELECT memvault.current_vault_id() AS id),
    t AS (
        SELECT t.*, s.name AS s_name, o.name AS o_name FROM memvault.triple t
        JOIN memvault.entity s ON s.vault_id = t.vault_id AND s.id = t.subject_id
        JOIN memvault.entity o ON o.vault_id = t.vault_id AND o.id = t.object_id, v
        WHERE t.vault_id = v.id AND t.invalid_at IS NULL
    ), types AS (SELECT * FROM memvault.entity_types_v1()),
    f AS (
        SELECT 'structure' AS level, 'self_loop' AS rule, t.id::text AS key, t.id AS target,
               'invalidate_triple' AS fix, format('%s %s %s: subject and object are one entity', t.s_name,
                                                  t.predicate, t.o_name) AS detail,
               jsonb_build_object('triple', t.id, 'block', t.evidence_block_id) AS subject
        FROM t WHERE t.subject_id = t.object_id
        UNION ALL
        SELECT 'structure', 'malformed_triple', t.id::text, t.id, 'invalidate_triple',
               format('%s %s %s: %s', left(t.s_name, 40), t.predicate, left(t.o_name, 40),
                      CASE WHEN t.predicate !~ '^[a-z][a-z_]*$' THEN 'predicate not snake_case'
                           ELSE 'an entity name is empty or too long' END),
               jsonb_build_object('triple', t.id, 'block', t.evidence_block_id)
        FROM t WHERE t.predicate !~ '^[a-z][a-z_]*$' OR btrim(t.s_name) = '' OR btrim(t.o_name) = ''
                  OR length(t.s_name) > p_max_name OR length(t.o_name) > p_max_name
        UNION ALL
        SELECT 'structure', 'dangling_evidence', t.id::text, t.id, 'invalidate_triple',
               format('%s %s %s: its memory #%s is %s', t.s_name, t.predicate, t.o_name, b.id,
                      CASE WHEN b.retracted_at IS NOT NULL THEN 'retracted' ELSE 'no longer valid' END),
               jsonb_build_object('triple', t.id, 'block', b.id)
        FROM t JOIN memvault.block b ON b.vault_id = t.vault_id AND b.id = t.evidence_block_id
        WHERE b.retracted_at IS NOT NULL OR b.invalid_at IS NOT NULL
        UNION ALL
        SELECT 'structure', 'cycle', t2.id::text, t2.id, 'invalidate_triple',
               format('%s %s %s and %s %s %s', t1.s_name, t1.predicate, t1.o_name, t2.s_name, t2.predicate, t2.o_name),
               jsonb_build_object('triple', t2.id, 'other', t1.id, 'block', t2.evidence_block_id)
        FROM t t1 JOIN t t2 ON t2.subject_id = t1.object_id AND t2.object_id = t1.subject_id
                           AND t2.predicate = t1.predicate AND (t2.recorded_at, t2.id) > (t1.recorded_at, t1.id)
        JOIN memvault.canonical_predicate cp ON cp.predicate = t1.predicate
        WHERE t1.subject_id <> t1.object_id AND (cp.domain <> cp.range OR cp.predicate = 'is_a')
        UNION ALL
        SELECT 'grounding', 'domain_mismatch', t.id::text, t.id, NULL,
               format('%s %s %s: %s is a %s elsewhere, %s wants a %s', t.s_name, t.predicate, t.o_name, t.s_name,
                      ty.type, t.predicate, cp.domain),
               jsonb_build_object('triple', t.id, 'block', t.evidence_block_id)
        FROM t JOIN memvault.canonical_predicate cp ON cp.predicate = t.predicate
        JOIN types ty ON ty.entity_id = t.subject_id
        WHERE cp.domain NOT IN ('thing', 'value') AND ty.type NOT IN ('thing', 'value') AND ty.type <> cp.domain
        UNION ALL
        SELECT 'grounding', 'range_mismatch', t.id::text, t.id, NULL,
               format('%s %s %s: %s is a %s elsewhere, %s wants a %s', t.s_name, t.predicate, t.o_name, t.o_name,
                      ty.type, t.predicate, cp.range),
               jsonb_build_object('triple', t.id, 'block', t.evidence_block_id)
        FROM t JOIN memvault.canonical_predicate cp ON cp.predicate = t.predicate
        JOIN types ty ON ty.entity_id = t.object_id
        WHERE cp.range NOT IN ('thing', 'value') AND ty.type NOT IN ('thing', 'value') AND ty.type <> cp.range
        UNION ALL
        SELECT 'grounding', 'unknown_predicate', t.predicate, NULL, NULL,
               format('predicate %s (%s triples) has no canonical definition', t.predicate, count(*)),
               jsonb_build_object('predicate', t.predicate, 'triples', count(*))
        FROM t WHERE NOT EXISTS (SELECT 1 FROM memvault.canonical_predicate cp WHERE cp.predicate = t.predicate)
        GROUP BY t.predicate
    ), ins AS (
        INSERT INTO memvault.lint_finding (vault_id, run_id, level, rule, key, subject, detail, fix, target_id)
        SELECT v.id, p_run, f.level, f.rule, f.key, f.subject, f.detail, f.fix, f.target FROM f, v
        ON CONFLICT (vault_id, rule, key) DO NOTHING
        RETURNING rule
    )
    SELECT i.rule, count(*)::integer FROM ins i GROUP BY i.rule ORDER BY 1
$$;

-- Level 3's findings (the lint_judge task): [{"rule", "key", "detail", "subject"}], reported, no fix.
CREATE OR REPLACE FUNCTION memvault.lint_add_v1(p_run bigint, p_items jsonb)
    RETURNS integer
    LANGUAGE sql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
    WITH ins AS (
        INSERT INTO memvault.lint_finding (vault_id, run_id, level, rule, key, subject, detail)
        SELECT memvault.current_vault_id(), p_run, 'judge', x->>'rule', x->>'key', coalesce(x->'subject', '{}'),
               x->>'detail'
        FROM jsonb_array_elements(p_items) AS x
        ON CONFLICT (vault_id, rule, key) DO NOTHING
        RETURNING 1
    )
    SELECT count(*)::integer FROM ins
$$;

-- Open findings with a fix, and what their fix would disturb: the evidence memory's use and the triple's ends'
-- degree (the impact signal).
CREATE OR REPLACE FUNCTION memvault.lint_fixable_v1(p_limit integer DEFAULT 500)
    RETURNS TABLE (finding_id bigint, rule text, fix text, target_id bigint, detail text, impact_signal double precision)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT f.id, f.rule, f.fix, f.target_id, f.detail,
           coalesce(u.access_count, 0) + 3 * coalesce(u.feedback_up, 0)
             + (SELECT count(*) FROM memvault.triple x WHERE x.vault_id = t.vault_id AND x.invalid_at IS NULL
                  AND (x.subject_id IN (t.subject_id, t.object_id) OR x.object_id IN (t.subject_id, t.object_id))) / 4.0
    FROM memvault.lint_finding f
    LEFT JOIN memvault.triple t ON t.vault_id = f.vault_id AND t.id = f.target_id
    LEFT JOIN memvault.block_usage u ON u.vault_id = t.vault_id AND u.block_id = t.evidence_block_id
    WHERE f.vault_id = memvault.current_vault_id() AND f.status = 'open' AND f.fix IS NOT NULL
    ORDER BY f.id LIMIT p_limit
$$;

-- Mark (stage one of three): the finding waits for a person.
CREATE OR REPLACE FUNCTION memvault.lint_mark_v1(p_finding bigint)
    RETURNS void
    LANGUAGE sql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
    UPDATE memvault.lint_finding f SET status = 'queued'
     WHERE f.vault_id = memvault.current_vault_id() AND f.id = p_finding AND f.status = 'open'
$$;

-- Check, then commit (stages two and three): approving re-checks that the finding still holds (its triple still
-- valid) and applies its fix; a finding that no longer holds is dismissed with nothing changed. Rejecting
-- dismisses it. Returns the final status.
CREATE OR REPLACE FUNCTION memvault.lint_commit_v1(p_finding bigint, p_approve boolean)
    RETURNS text
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    v_vault uuid := memvault.current_vault_id();
    f       memvault.lint_finding;
    v_n     integer := 0;
BEGIN
    SELECT * INTO f FROM memvault.lint_finding x WHERE x.vault_id = v_vault AND x.id = p_finding FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no lint finding % in this vault', p_finding USING ERRCODE = 'MV404';
    END IF;
    IF f.status IN ('fixed', 'dismissed') THEN
        RETURN f.status;
    END IF;
    IF p_approve AND f.fix = 'invalidate_triple' THEN
        UPDATE memvault.triple t SET invalid_at = greatest(clock_timestamp(), t.valid_at)
         WHERE t.vault_id = v_vault AND t.id = f.target_id AND t.invalid_at IS NULL;
        GET DIAGNOSTICS v_n = ROW_COUNT;
    ELSIF p_approve AND f.fix = 'retract_block' THEN
        UPDATE memvault.block b SET retracted_at = clock_timestamp()
         WHERE b.vault_id = v_vault AND b.id = f.target_id AND b.retracted_at IS NULL;
        GET DIAGNOSTICS v_n = ROW_COUNT;
    ELSIF p_approve AND f.fix = 'delete_entity' THEN
        DELETE FROM memvault.entity e WHERE e.vault_id = v_vault AND e.id = f.target_id
           AND NOT EXISTS (SELECT 1 FROM memvault.triple t WHERE t.vault_id = v_vault
                           AND (t.subject_id = e.id OR t.object_id = e.id));
        GET DIAGNOSTICS v_n = ROW_COUNT;
    END IF;
    UPDATE memvault.lint_finding x
       SET status = CASE WHEN p_approve AND v_n > 0 THEN 'fixed' ELSE 'dismissed' END, decided_at = clock_timestamp()
     WHERE x.vault_id = v_vault AND x.id = f.id;
    IF v_n > 0 THEN
        INSERT INTO memvault.audit_log (vault_id, actor, action, rule, detail)
        VALUES (v_vault, memvault.audit_actor('worker:dream'),
                'lint.' || f.fix, f.rule, jsonb_build_object('finding', f.id, 'target', f.target_id, 'detail', f.detail));
    END IF;
    RETURN CASE WHEN p_approve AND v_n > 0 THEN 'fixed' ELSE 'dismissed' END;
END
$$;

CREATE OR REPLACE FUNCTION memvault.lint_findings_v1(p_status text DEFAULT NULL, p_level text DEFAULT NULL,
                                                     p_limit integer DEFAULT 100)
    RETURNS SETOF jsonb
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT to_jsonb(f) - 'vault_id' FROM memvault.lint_finding f
    WHERE f.vault_id = memvault.current_vault_id() AND (p_status IS NULL OR f.status = p_status)
      AND (p_level IS NULL OR f.level = p_level)
    ORDER BY f.id DESC LIMIT p_limit
$$;

-- The judge's input: memories recorded since p_since with their graph degree (links), newest first.
CREATE OR REPLACE FUNCTION memvault.lint_snapshot_v1(p_since timestamptz, p_kinds text[], p_limit integer DEFAULT 60)
    RETURNS TABLE (block_id bigint, content text, recorded_at timestamptz, links integer)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT b.id, b.content, b.valid_at,
           (SELECT count(*)::integer FROM memvault.triple t WHERE t.vault_id = b.vault_id AND t.evidence_block_id = b.id)
    FROM memvault.block b
    WHERE b.vault_id = memvault.current_vault_id() AND b.kind = ANY (p_kinds) AND b.invalid_at IS NULL
      AND b.retracted_at IS NULL AND b.recorded_at > coalesce(p_since, '-infinity')
    ORDER BY b.recorded_at DESC, b.id DESC LIMIT p_limit
$$;

