-- The review queue (seed 004, "if you get a blurry one, send it back to the teacher"; app/background/review.py):
-- the auto-approve rule per vault and kind, queueing, claims that lapse, decisions that commit the proposal and
-- recalibrate the rule. Applied at head.

-- The current vault's rule for p_kind (created with the defaults on first use).
CREATE OR REPLACE FUNCTION memvault.review_thresholds_v1(p_kind text, p_min_confidence double precision DEFAULT 0.8,
                                                         p_max_impact double precision DEFAULT 0.5)
    RETURNS TABLE (min_confidence real, max_impact real, approved integer, rejected integer)
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    INSERT INTO memvault.review_threshold (vault_id, kind, min_confidence, max_impact)
    VALUES (memvault.current_vault_id(), p_kind, p_min_confidence, p_max_impact)
    ON CONFLICT DO NOTHING;
    RETURN QUERY SELECT t.min_confidence, t.max_impact, t.approved, t.rejected FROM memvault.review_threshold t
                 WHERE t.vault_id = memvault.current_vault_id() AND t.kind = p_kind;
END
$$;

-- Queue a change for a person; the same (kind, ref) is queued once. Returns the item's id.
CREATE OR REPLACE FUNCTION memvault.review_enqueue_v1(p_kind text, p_ref bigint, p_proposal jsonb, p_confidence double precision,
                                                      p_impact double precision, p_reason text, p_checked jsonb DEFAULT NULL,
                                                      p_ttl interval DEFAULT '7 days')
    RETURNS bigint
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    v_id bigint;
BEGIN
    INSERT INTO memvault.review_queue (vault_id, kind, ref_id, proposal, confidence, impact, reason, checked, due_at)
    VALUES (memvault.current_vault_id(), p_kind, p_ref, p_proposal, greatest(least(p_confidence, 1), 0),
            greatest(least(p_impact, 1), 0), p_reason, p_checked, clock_timestamp() + p_ttl)
    ON CONFLICT (vault_id, kind, ref_id) DO NOTHING
    RETURNING id INTO v_id;
    IF v_id IS NULL THEN
        SELECT q.id INTO v_id FROM memvault.review_queue q
        WHERE q.vault_id = memvault.current_vault_id() AND q.kind = p_kind AND q.ref_id = p_ref;
    END IF;
    RETURN v_id;
END
$$;

CREATE OR REPLACE FUNCTION memvault.review_list_v1(p_status text DEFAULT NULL, p_kind text DEFAULT NULL,
                                                   p_limit integer DEFAULT 50, p_before bigint DEFAULT NULL)
    RETURNS SETOF jsonb
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT to_jsonb(q) - 'vault_id' || jsonb_build_object('overdue', q.status IN ('PENDING', 'CLAIMED')
                                                                     AND q.due_at < now())
    FROM memvault.review_queue q
    WHERE q.vault_id = memvault.current_vault_id() AND (p_status IS NULL OR q.status = p_status)
      AND (p_kind IS NULL OR q.kind = p_kind) AND (p_before IS NULL OR q.id < p_before)
    ORDER BY q.id DESC LIMIT p_limit
$$;

-- A reviewer takes an item: it is theirs until due_at (now + p_ttl); past that the sweep returns it to PENDING.
CREATE OR REPLACE FUNCTION memvault.review_claim_v1(p_id bigint, p_by text, p_ttl interval DEFAULT '1 day')
    RETURNS jsonb
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    r jsonb;
BEGIN
    UPDATE memvault.review_queue q SET status = 'CLAIMED', claimed_by = p_by, due_at = clock_timestamp() + p_ttl
     WHERE q.vault_id = memvault.current_vault_id() AND q.id = p_id AND q.status IN ('PENDING', 'CLAIMED')
    RETURNING to_jsonb(q) - 'vault_id' INTO r;
    IF r IS NULL THEN
        PERFORM memvault._review_missing_v1(p_id);
    END IF;
    RETURN r;
END
$$;

CREATE OR REPLACE FUNCTION memvault._review_missing_v1(p_id bigint)
    RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    v_status text;
BEGIN
    SELECT q.status INTO v_status FROM memvault.review_queue q
    WHERE q.vault_id = memvault.current_vault_id() AND q.id = p_id;
    IF v_status IS NULL THEN
        RAISE EXCEPTION 'no review item % in this vault', p_id USING ERRCODE = 'MV404',
            HINT = 'list them: GET /v1/vaults/{vault}/review';
    END IF;
    RAISE EXCEPTION 'review item % is already %', p_id, v_status USING ERRCODE = 'MV409',
        HINT = 'only PENDING or CLAIMED items can be claimed or decided';
END
$$;

-- A person decides. Approving commits the proposal through the function that owns that change (a conflict
-- verdict: apply_conflict_verdict_v1; a lint finding: lint_commit_v1); a proposal whose memories changed since
-- is refused (409) and stays queued. Then the vault's rule for the kind moves by p_rate toward the decision:
-- an approved item that was queued for its impact raises max_impact toward it (similar ones pass next time),
-- one queued for its confidence lowers min_confidence toward it; a rejected item that the rule would have passed
-- pulls the rule away from it.
CREATE OR REPLACE FUNCTION memvault.review_decide_v1(p_id bigint, p_approve boolean, p_by text, p_note text,
                                                     p_rate double precision DEFAULT 0.2)
    RETURNS jsonb
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    v_vault  uuid := memvault.current_vault_id();
    q        memvault.review_queue;
    t        record;
    v_result text;
    r        jsonb;
BEGIN
    SELECT * INTO q FROM memvault.review_queue x WHERE x.vault_id = v_vault AND x.id = p_id FOR UPDATE;
    IF NOT FOUND OR q.status NOT IN ('PENDING', 'CLAIMED') THEN
        PERFORM memvault._review_missing_v1(p_id);
    END IF;
    PERFORM set_config('memvault.actor', memvault.audit_actor('review:' || coalesce(p_by, 'unknown')), true);
    IF q.kind = 'conflict' THEN
        IF p_approve THEN
            v_result := memvault.apply_conflict_verdict_v1(q.ref_id, q.proposal->>'action', q.confidence,
                                                           coalesce(q.proposal->>'reason', q.reason),
                                                           'review:' || coalesce(p_by, 'unknown'), 'applied');
            IF v_result = 'stale' THEN
                RAISE EXCEPTION 'review item %: its memories changed since it was queued', p_id
                    USING ERRCODE = 'MV409', HINT = 'reject it; the next dream finds the pair again if it still holds';
            END IF;
        ELSE
            UPDATE memvault.dream_conflict c SET status = 'rejected', decided_at = clock_timestamp()
             WHERE c.vault_id = v_vault AND c.id = q.ref_id AND c.status IN ('candidate', 'queued');
        END IF;
    ELSIF q.kind = 'lint' THEN
        PERFORM memvault.lint_commit_v1(q.ref_id, p_approve);
    END IF;

    SELECT * INTO t FROM memvault.review_thresholds_v1(q.kind);
    IF p_approve THEN
        UPDATE memvault.review_threshold x
           SET max_impact = CASE WHEN q.impact >= x.max_impact
                                 THEN least(1, x.max_impact + p_rate * (q.impact + 0.01 - x.max_impact))
                                 ELSE x.max_impact END,
               min_confidence = CASE WHEN q.confidence <= x.min_confidence
                                     THEN greatest(0.5, x.min_confidence - p_rate * (x.min_confidence - q.confidence + 0.01))
                                     ELSE x.min_confidence END,
               approved = x.approved + 1, updated_at = clock_timestamp()
         WHERE x.vault_id = v_vault AND x.kind = q.kind;
    ELSE
        UPDATE memvault.review_threshold x
           SET min_confidence = CASE WHEN q.confidence > x.min_confidence
                                     THEN least(0.99, x.min_confidence + p_rate * (q.confidence + 0.01 - x.min_confidence))
                                     ELSE x.min_confidence END,
               max_impact = CASE WHEN q.impact < x.max_impact
                                 THEN greatest(0, x.max_impact - p_rate * (x.max_impact - q.impact + 0.01))
                                 ELSE x.max_impact END,
               rejected = x.rejected + 1, updated_at = clock_timestamp()
         WHERE x.vault_id = v_vault AND x.kind = q.kind;
    END IF;

    UPDATE memvault.review_queue x
       SET status = CASE WHEN p_approve THEN 'APPROVED' ELSE 'REJECTED' END, decided_at = clock_timestamp(),
           decided_by = p_by, note = p_note
     WHERE x.vault_id = v_vault AND x.id = p_id
    RETURNING to_jsonb(x) - 'vault_id' INTO r;
    RETURN r;
END
$$;

-- Overdue items, every vault (the hourly job, as the owner): a lapsed claim returns to PENDING; a PENDING item
-- past due stays PENDING with overdue_count raised and a new due date. Nothing is dropped. Returns the count.
CREATE OR REPLACE FUNCTION memvault.review_sweep_v1(p_now timestamptz DEFAULT now(), p_ttl interval DEFAULT '7 days')
    RETURNS integer
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    v_n integer;
BEGIN
    UPDATE memvault.review_queue q
       SET status = 'PENDING', claimed_by = NULL, overdue_count = q.overdue_count + 1, due_at = p_now + p_ttl
     WHERE q.status IN ('PENDING', 'CLAIMED') AND q.due_at < p_now
       AND (memvault.current_vault_id() IS NULL OR q.vault_id = memvault.current_vault_id());
    GET DIAGNOSTICS v_n = ROW_COUNT;
    RETURN v_n;
END
$$;

