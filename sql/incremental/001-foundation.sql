-- 001-foundation: the system of record for the write and read tracks.
-- Run-once DDL: never edited after it lands (tests/integration/test_migrations.py checks its hash).
-- Functions live in sql/idempotent/ and are re-applied by every migration.

CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS age;
CREATE SCHEMA IF NOT EXISTS memvault;

-- The role the service acts as inside a transaction (SET LOCAL ROLE), so row-level security applies.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memvault_app') THEN
        CREATE ROLE memvault_app NOLOGIN;
    END IF;
END
$$;
GRANT USAGE ON SCHEMA memvault TO memvault_app;
GRANT USAGE ON SCHEMA ag_catalog TO memvault_app;
GRANT SELECT ON ALL TABLES IN SCHEMA ag_catalog TO memvault_app;

-- The vault a transaction acts for; row-level security policies compare every row's vault_id with it.
CREATE FUNCTION memvault.current_vault_id() RETURNS uuid
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT nullif(current_setting('memvault.vault_id', true), '')::uuid $$;

-- One row: which embedder produced the vectors of this database (DESIGN section 3).
CREATE TABLE memvault.embedder_config (
    singleton     boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    name          text NOT NULL,
    dim           integer NOT NULL CHECK (dim > 0),
    configured_at timestamptz NOT NULL DEFAULT now(),
    next_name     text,
    next_dim      integer CHECK (next_dim > 0)
);

CREATE TABLE memvault.vault (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name       text NOT NULL UNIQUE CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$'),
    graph_name text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    settings   jsonb NOT NULL DEFAULT '{}'::jsonb
);

CREATE TABLE memvault.api_key (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    vault_id    uuid REFERENCES memvault.vault (id) ON DELETE CASCADE,
    prefix      text NOT NULL UNIQUE,
    key_hash    bytea NOT NULL,
    scopes      text[] NOT NULL DEFAULT ARRAY['read', 'write'],
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);

CREATE TABLE memvault.session (
    vault_id     uuid NOT NULL REFERENCES memvault.vault (id) ON DELETE CASCADE,
    id           text NOT NULL CHECK (length(id) BETWEEN 1 AND 200),
    started_at   timestamptz NOT NULL,
    last_turn_at timestamptz NOT NULL,
    closed_at    timestamptz,
    turn_count   integer NOT NULL DEFAULT 0,
    summary      text,
    thread_map   jsonb,
    metadata     jsonb NOT NULL DEFAULT '{}'::jsonb,
    PRIMARY KEY (vault_id, id)
);
CREATE INDEX session_open_idx ON memvault.session (last_turn_at) WHERE closed_at IS NULL;

CREATE TABLE memvault.turn (
    vault_id    uuid NOT NULL,
    id          bigint GENERATED ALWAYS AS IDENTITY,
    session_id  text NOT NULL,
    seq         integer NOT NULL,
    role        text NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
    content     text NOT NULL,
    said_at     timestamptz NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    metadata    jsonb NOT NULL DEFAULT '{}'::jsonb,
    PRIMARY KEY (vault_id, id),
    UNIQUE (vault_id, session_id, seq),
    FOREIGN KEY (vault_id, session_id) REFERENCES memvault.session (vault_id, id) ON DELETE CASCADE
);

-- A memory unit. Valid time: valid_at / invalid_at / superseded_by. Transaction time: recorded_at (this
-- version) / retracted_at; earlier versions are kept in block_history by a trigger.
CREATE TABLE memvault.block (
    vault_id         uuid NOT NULL REFERENCES memvault.vault (id) ON DELETE CASCADE,
    id               bigint GENERATED ALWAYS AS IDENTITY,
    kind             text NOT NULL DEFAULT 'memory'
                     CHECK (kind IN ('memory', 'chunk', 'unit', 'summary', 'thread')),
    category         text CHECK (category IN ('Decision', 'OpenQuestion', 'Constraint', 'Fact', 'Idea',
                                              'ActionItem', 'Topic', 'Provisional', 'Preference')),
    content          text NOT NULL,
    normalized       text NOT NULL,
    norm_spans       jsonb NOT NULL DEFAULT '[]'::jsonb,
    summary          text,
    digest           text,
    embedding        vector,
    tsv              tsvector NOT NULL,
    fingerprint      bigint NOT NULL,
    content_hash     bytea NOT NULL,
    lang             text,
    token_count      integer NOT NULL DEFAULT 0,
    session_id       text,
    source_kind      text NOT NULL CHECK (source_kind IN ('user', 'assistant', 'tool', 'import', 'web',
                                                          'note', 'resource', 'system')),
    trust_score      real NOT NULL CHECK (trust_score BETWEEN 0 AND 1),
    confidence       real NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    source_turn_ids  bigint[] NOT NULL DEFAULT '{}',
    tier             text NOT NULL DEFAULT 'hot' CHECK (tier IN ('hot', 'warm', 'cold', 'frozen')),
    access_count     integer NOT NULL DEFAULT 0,
    last_accessed_at timestamptz,
    feedback_up      integer NOT NULL DEFAULT 0,
    feedback_down    integer NOT NULL DEFAULT 0,
    quarantine_tags  text[] NOT NULL DEFAULT '{}',
    ppr_score        real NOT NULL DEFAULT 0,
    valid_at         timestamptz NOT NULL,
    invalid_at       timestamptz,
    superseded_by    bigint,
    recorded_at      timestamptz NOT NULL DEFAULT now(),
    retracted_at     timestamptz,
    version          integer NOT NULL DEFAULT 1,
    metadata         jsonb NOT NULL DEFAULT '{}'::jsonb,
    PRIMARY KEY (vault_id, id),
    FOREIGN KEY (vault_id, superseded_by) REFERENCES memvault.block (vault_id, id)
);
CREATE INDEX block_tsv_idx ON memvault.block USING gin (tsv);
CREATE INDEX block_fingerprint_idx ON memvault.block (vault_id, fingerprint);
CREATE INDEX block_hash_idx ON memvault.block (vault_id, content_hash);
CREATE INDEX block_valid_idx ON memvault.block (vault_id, valid_at);
CREATE INDEX block_session_idx ON memvault.block (vault_id, session_id);
-- The HNSW index needs a typed column: memvault.configure_embedder_v1() types the column and builds it.

-- Earlier versions of blocks (transaction time). A row here was believed from recorded_at until replaced_at.
CREATE TABLE memvault.block_history (
    vault_id      uuid NOT NULL,
    id            bigint NOT NULL,
    version       integer NOT NULL,
    kind          text NOT NULL,
    category      text,
    content       text NOT NULL,
    normalized    text NOT NULL,
    source_kind   text NOT NULL,
    trust_score   real NOT NULL,
    confidence    real NOT NULL,
    tier          text NOT NULL,
    valid_at      timestamptz NOT NULL,
    invalid_at    timestamptz,
    superseded_by bigint,
    recorded_at   timestamptz NOT NULL,
    retracted_at  timestamptz,
    replaced_at   timestamptz NOT NULL,
    PRIMARY KEY (vault_id, id, version),
    FOREIGN KEY (vault_id, id) REFERENCES memvault.block (vault_id, id) ON DELETE CASCADE
);

-- Every place a memory was said (SKIP records a new occurrence: being said again is evidence).
CREATE TABLE memvault.block_source (
    vault_id    uuid NOT NULL,
    block_id    bigint NOT NULL,
    turn_id     bigint,
    session_id  text,
    source_kind text NOT NULL,
    said_at     timestamptz NOT NULL,
    decision    text NOT NULL CHECK (decision IN ('CREATE', 'SKIP', 'MERGE', 'SUPERSEDE', 'IMPORT')),
    recorded_at timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (vault_id, block_id) REFERENCES memvault.block (vault_id, id) ON DELETE CASCADE
);
CREATE INDEX block_source_block_idx ON memvault.block_source (vault_id, block_id);
CREATE INDEX block_source_turn_idx ON memvault.block_source (vault_id, turn_id);

CREATE TABLE memvault.entity (
    vault_id      uuid NOT NULL REFERENCES memvault.vault (id) ON DELETE CASCADE,
    id            bigint GENERATED ALWAYS AS IDENTITY,
    name          text NOT NULL,
    canonical_key text NOT NULL,
    kind          text,
    embedding     vector,
    mention_count integer NOT NULL DEFAULT 0,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (vault_id, id),
    UNIQUE (vault_id, canonical_key)
);

CREATE TABLE memvault.entity_alias (
    vault_id  uuid NOT NULL,
    alias_key text NOT NULL,
    alias     text NOT NULL,
    entity_id bigint NOT NULL,
    source    text NOT NULL DEFAULT 'resolver',
    PRIMARY KEY (vault_id, alias_key),
    FOREIGN KEY (vault_id, entity_id) REFERENCES memvault.entity (vault_id, id) ON DELETE CASCADE
);

CREATE TABLE memvault.triple (
    vault_id          uuid NOT NULL,
    id                bigint GENERATED ALWAYS AS IDENTITY,
    subject_id        bigint NOT NULL,
    predicate         text NOT NULL,
    object_id         bigint NOT NULL,
    evidence_block_id bigint,
    confidence        real NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    valid_at          timestamptz NOT NULL,
    invalid_at        timestamptz,
    recorded_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (vault_id, id),
    FOREIGN KEY (vault_id, subject_id) REFERENCES memvault.entity (vault_id, id) ON DELETE CASCADE,
    FOREIGN KEY (vault_id, object_id) REFERENCES memvault.entity (vault_id, id) ON DELETE CASCADE,
    FOREIGN KEY (vault_id, evidence_block_id) REFERENCES memvault.block (vault_id, id) ON DELETE SET NULL (evidence_block_id)
);
CREATE INDEX triple_subject_idx ON memvault.triple (vault_id, subject_id);
CREATE INDEX triple_object_idx ON memvault.triple (vault_id, object_id);
CREATE INDEX triple_evidence_idx ON memvault.triple (vault_id, evidence_block_id);

CREATE TABLE memvault.knowledge_gap (
    vault_id      uuid NOT NULL REFERENCES memvault.vault (id) ON DELETE CASCADE,
    id            bigint GENERATED ALWAYS AS IDENTITY,
    query         text NOT NULL,
    query_key     text NOT NULL,
    incorrect_count integer NOT NULL DEFAULT 0,
    first_seen_at timestamptz NOT NULL DEFAULT now(),
    last_seen_at  timestamptz NOT NULL DEFAULT now(),
    resolved_at   timestamptz,
    PRIMARY KEY (vault_id, id),
    UNIQUE (vault_id, query_key)
);

CREATE TABLE memvault.idempotency_key (
    vault_id     uuid NOT NULL REFERENCES memvault.vault (id) ON DELETE CASCADE,
    key          text NOT NULL,
    request_hash bytea NOT NULL,
    status_code  integer NOT NULL,
    response     jsonb NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (vault_id, key)
);

-- Logs: partitioned by month (DESIGN section 6); memvault.ensure_log_partitions_v1() adds months ahead.
CREATE TABLE memvault.recall_log (
    vault_id     uuid NOT NULL,
    id           bigint GENERATED ALWAYS AS IDENTITY,
    at           timestamptz NOT NULL DEFAULT now(),
    query        text NOT NULL,
    intent       text NOT NULL,
    mode         text NOT NULL,
    thinking     text NOT NULL,
    stage_ms     jsonb NOT NULL DEFAULT '{}'::jsonb,
    returned_ids bigint[] NOT NULL DEFAULT '{}',
    tokens_used  integer NOT NULL DEFAULT 0,
    crag_verdict text,
    prefetch_hit boolean NOT NULL DEFAULT false,
    PRIMARY KEY (vault_id, at, id)
) PARTITION BY RANGE (at);
CREATE TABLE memvault.recall_log_default PARTITION OF memvault.recall_log DEFAULT;
CREATE INDEX recall_log_vault_at_idx ON memvault.recall_log (vault_id, at);

CREATE TABLE memvault.audit_log (
    vault_id        uuid,
    id              bigint GENERATED ALWAYS AS IDENTITY,
    at              timestamptz NOT NULL DEFAULT now(),
    actor           text NOT NULL,
    action          text NOT NULL,
    block_id        bigint,
    rule            text,
    ruleset_version text,
    detail          jsonb NOT NULL DEFAULT '{}'::jsonb,
    PRIMARY KEY (at, id)
) PARTITION BY RANGE (at);
CREATE TABLE memvault.audit_log_default PARTITION OF memvault.audit_log DEFAULT;
CREATE INDEX audit_log_vault_at_idx ON memvault.audit_log (vault_id, at);
CREATE INDEX audit_log_block_idx ON memvault.audit_log (vault_id, block_id);

-- Slow Thinker's speculative cache: UNLOGGED (a crash empties it, which is fine for a cache).
CREATE UNLOGGED TABLE memvault.prefetch_cache (
    vault_id   uuid NOT NULL REFERENCES memvault.vault (id) ON DELETE CASCADE,
    query_hash bytea NOT NULL,
    query      text NOT NULL,
    payload    jsonb NOT NULL,
    confidence real NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (vault_id, query_hash)
);

-- Row-level security: every vault-keyed table is visible only for the vault set in memvault.vault_id.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['session', 'turn', 'block', 'block_history', 'block_source', 'entity',
                             'entity_alias', 'triple', 'knowledge_gap', 'idempotency_key', 'recall_log',
                             'audit_log', 'prefetch_cache']
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
GRANT SELECT ON memvault.vault, memvault.embedder_config TO memvault_app;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA memvault TO memvault_app;

-- Transaction time: an UPDATE that changes what a block says keeps the previous version.
CREATE FUNCTION memvault._block_keep_history() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    IF (OLD.content, OLD.category, OLD.valid_at, OLD.invalid_at, OLD.superseded_by, OLD.retracted_at,
        OLD.trust_score, OLD.confidence, OLD.tier)
       IS DISTINCT FROM
       (NEW.content, NEW.category, NEW.valid_at, NEW.invalid_at, NEW.superseded_by, NEW.retracted_at,
        NEW.trust_score, NEW.confidence, NEW.tier) THEN
        INSERT INTO memvault.block_history (vault_id, id, version, kind, category, content, normalized,
            source_kind, trust_score, confidence, tier, valid_at, invalid_at, superseded_by, recorded_at,
            retracted_at, replaced_at)
        VALUES (OLD.vault_id, OLD.id, OLD.version, OLD.kind, OLD.category, OLD.content, OLD.normalized,
            OLD.source_kind, OLD.trust_score, OLD.confidence, OLD.tier, OLD.valid_at, OLD.invalid_at,
            OLD.superseded_by, OLD.recorded_at, OLD.retracted_at, clock_timestamp());
        NEW.version := OLD.version + 1;
        NEW.recorded_at := clock_timestamp();
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER block_keep_history BEFORE UPDATE ON memvault.block
    FOR EACH ROW EXECUTE FUNCTION memvault._block_keep_history();

-- audit_log is append-only.
CREATE FUNCTION memvault._audit_log_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION 'memvault.audit_log is append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON memvault.audit_log
    FOR EACH ROW EXECUTE FUNCTION memvault._audit_log_append_only();
