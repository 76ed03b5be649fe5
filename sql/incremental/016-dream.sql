-- 016-dream: the background track's dream loop (seed 004): its runs, the contradictions it finds and how they
-- were judged, the review queue with its per-vault thresholds, and the discovery inbox.
-- Run-once DDL: never edited after it lands. Functions: sql/idempotent/100-dream.sql, 105-review.sql.

-- One dream of one vault: the stage it completed last (a killed or failed run resumes after it), per-stage
-- statistics and wall time, and the report of the last stage. A dry run records what it would change.
CREATE TABLE memvault.dream_run (
    vault_id      uuid NOT NULL REFERENCES memvault.vault (id) ON DELETE CASCADE,
    id            bigint GENERATED ALWAYS AS IDENTITY,
    trigger       text NOT NULL CHECK (trigger IN ('schedule', 'manual', 'bench')),
    dry_run       boolean NOT NULL DEFAULT false,
    status        text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'failed', 'done')),
    stage         text CHECK (stage IN ('orient', 'gather_signal', 'reflect', 'consolidate', 'prune_and_report')),
    stats         jsonb NOT NULL DEFAULT '{}'::jsonb,
    report        jsonb,
    error         text,
    attempts      integer NOT NULL DEFAULT 1,
    started_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz,
    wall_ms       integer,
    PRIMARY KEY (vault_id, id)
);
-- At most one unfinished real run per vault: the one a new dream resumes.
CREATE UNIQUE INDEX dream_run_unfinished_idx ON memvault.dream_run (vault_id) WHERE status <> 'done' AND NOT dry_run;
CREATE INDEX dream_run_done_idx ON memvault.dream_run (vault_id, finished_at) WHERE status = 'done' AND NOT dry_run;

-- A pair of memories the contradiction scan found (the older one first), and the judge's verdict on it.
-- 'slot': two facts with the same subject and a single-valued predicate but different objects; 'semantic': high
-- cosine; 'duplicate': the same text twice. One row per pair ever: a pair judged once is never judged again (the dream is idempotent).
CREATE TABLE memvault.dream_conflict (
    vault_id      uuid NOT NULL REFERENCES memvault.vault (id) ON DELETE CASCADE,
    id            bigint GENERATED ALWAYS AS IDENTITY,
    run_id        bigint NOT NULL,
    old_block_id  bigint NOT NULL,
    new_block_id  bigint NOT NULL,
    source        text NOT NULL CHECK (source IN ('slot', 'semantic', 'duplicate')),
    detail        jsonb NOT NULL DEFAULT '{}'::jsonb,
    status        text NOT NULL DEFAULT 'candidate' CHECK (status IN ('candidate', 'applied', 'queued', 'kept',
                                                                         'rejected', 'stale')),
    action        text CHECK (action IN ('MERGE', 'SUPERSEDE', 'COEXIST')),
    confidence    real CHECK (confidence BETWEEN 0 AND 1),
    reason        text,
    judge         text,
    found_at      timestamptz NOT NULL DEFAULT now(),
    decided_at    timestamptz,
    PRIMARY KEY (vault_id, id),
    UNIQUE (vault_id, old_block_id, new_block_id),
    CHECK (old_block_id <> new_block_id),
    FOREIGN KEY (vault_id, old_block_id) REFERENCES memvault.block (vault_id, id) ON DELETE CASCADE,
    FOREIGN KEY (vault_id, new_block_id) REFERENCES memvault.block (vault_id, id) ON DELETE CASCADE
);
CREATE INDEX dream_conflict_status_idx ON memvault.dream_conflict (vault_id, status);
CREATE INDEX dream_conflict_new_idx ON memvault.dream_conflict (vault_id, new_block_id);

-- Changes waiting for a person: low confidence, high impact, or a high-impact lint finding (mark -> check ->
-- commit). proposal is what approving commits. An item past due_at goes back to PENDING (a claim lapses) or
-- stays PENDING with overdue_count raised; nothing here is ever deleted by the service.
CREATE TABLE memvault.review_queue (
    vault_id      uuid NOT NULL REFERENCES memvault.vault (id) ON DELETE CASCADE,
    id            bigint GENERATED ALWAYS AS IDENTITY,
    kind          text NOT NULL CHECK (kind IN ('conflict', 'lint')),
    ref_id        bigint NOT NULL,
    proposal      jsonb NOT NULL,
    confidence    real NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    impact        real NOT NULL CHECK (impact BETWEEN 0 AND 1),
    reason        text NOT NULL,
    status        text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'CLAIMED', 'APPROVED', 'REJECTED')),
    checked       jsonb,
    claimed_by    text,
    overdue_count integer NOT NULL DEFAULT 0,
    due_at        timestamptz NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    decided_at    timestamptz,
    decided_by    text,
    note          text,
    PRIMARY KEY (vault_id, id),
    UNIQUE (vault_id, kind, ref_id)
);
CREATE INDEX review_queue_open_idx ON memvault.review_queue (vault_id, due_at) WHERE status IN ('PENDING', 'CLAIMED');

-- The auto-approve rule of each vault and kind (confidence above min_confidence AND impact below max_impact),
-- moved by every decision a person makes on a queued item.
CREATE TABLE memvault.review_threshold (
    vault_id       uuid NOT NULL REFERENCES memvault.vault (id) ON DELETE CASCADE,
    kind           text NOT NULL CHECK (kind IN ('conflict', 'lint')),
    min_confidence real NOT NULL CHECK (min_confidence BETWEEN 0 AND 1),
    max_impact     real NOT NULL CHECK (max_impact BETWEEN 0 AND 1),
    approved       integer NOT NULL DEFAULT 0,
    rejected       integer NOT NULL DEFAULT 0,
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (vault_id, kind)
);

-- "This you may want to see": what the dream noticed (insights, knowledge gaps, surprising links), shown when the
-- user asks for it, never pushed into a conversation. key makes a finding unique, so a second dream adds nothing.
CREATE TABLE memvault.discovery_inbox (
    vault_id      uuid NOT NULL REFERENCES memvault.vault (id) ON DELETE CASCADE,
    id            bigint GENERATED ALWAYS AS IDENTITY,
    kind          text NOT NULL CHECK (kind IN ('insight', 'knowledge_gap', 'cross_community', 'indirect_strong')),
    key           text NOT NULL,
    title         text NOT NULL,
    detail        jsonb NOT NULL DEFAULT '{}'::jsonb,
    score         real NOT NULL DEFAULT 0,
    run_id        bigint,
    created_at    timestamptz NOT NULL DEFAULT now(),
    dismissed_at  timestamptz,
    PRIMARY KEY (vault_id, id),
    UNIQUE (vault_id, kind, key)
);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['dream_run', 'dream_conflict', 'review_queue', 'review_threshold', 'discovery_inbox']
    LOOP
        EXECUTE format('ALTER TABLE memvault.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE memvault.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format(
            'CREATE POLICY vault_isolation ON memvault.%I TO memvault_app '
            'USING (vault_id = memvault.current_vault_id()) '
            'WITH CHECK (vault_id = memvault.current_vault_id())', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON memvault.%I TO memvault_app', t);
    END LOOP;
END
$$;
