-- 020-dream-graph: what the dream loop learns from the graph and the conversation (seed 004): canonical predicate
-- definitions (the lint's grounding, entity types), the entity-type affinity prior, multi-signal edge weights,
-- Leiden communities and their summaries, attitudes and skills, the daily interest snapshot, lint findings.
-- Run-once DDL: never edited after it lands. Functions: sql/idempotent/110-dream-graph.sql and after.

-- The canonical definition of each predicate the extractors produce: the entity type of its subject (domain) and
-- of its object (range), and whether it holds one value at a time. Reference data, shared by every vault.
CREATE TABLE memvault.canonical_predicate (
    predicate     text PRIMARY KEY CHECK (predicate ~ '^[a-z][a-z_]*$'),
    domain        text NOT NULL,
    range         text NOT NULL,
    single_valued boolean NOT NULL DEFAULT false,
    description   text NOT NULL
);
INSERT INTO memvault.canonical_predicate (predicate, domain, range, single_valued, description) VALUES
    ('lives_in', 'person', 'place', true, 'where someone lives now'),
    ('moved_to', 'person', 'place', true, 'where someone moved (and so lives)'),
    ('born_in', 'person', 'place', true, 'where someone was born'),
    ('visited', 'person', 'place', false, 'a place someone went to'),
    ('works_at', 'person', 'organization', true, 'the organization someone works for'),
    ('works_as', 'person', 'role', true, 'someone''s occupation'),
    ('job', 'person', 'role', true, 'someone''s job'),
    ('title', 'person', 'role', true, 'someone''s title'),
    ('role', 'person', 'role', true, 'someone''s role'),
    ('married_to', 'person', 'person', true, 'a spouse'),
    ('likes', 'person', 'thing', false, 'something someone likes'),
    ('dislikes', 'person', 'thing', false, 'something someone dislikes'),
    ('prefers', 'person', 'thing', false, 'something someone prefers'),
    ('uses', 'person', 'thing', false, 'a tool or thing someone uses'),
    ('studies', 'person', 'topic', false, 'a subject someone studies'),
    ('plays', 'person', 'activity', false, 'a game, sport or instrument someone plays'),
    ('has', 'thing', 'thing', false, 'possession or part'),
    ('is', 'thing', 'thing', false, 'identity or state (free text: not one value at a time)'),
    ('is_a', 'thing', 'thing', false, 'kind of (a thing can be of several kinds)'),
    ('age', 'person', 'value', true, 'someone''s age'),
    ('name', 'thing', 'value', true, 'a name'),
    ('email', 'person', 'value', true, 'an e-mail address'),
    ('phone', 'person', 'value', true, 'a phone number'),
    ('address', 'person', 'value', true, 'a postal address'),
    ('status', 'thing', 'value', false, 'a state (free text)');
GRANT SELECT ON memvault.canonical_predicate TO memvault_app;

-- The prior strength of a link between two entity types (symmetric: stored once, type_a <= type_b); a pair not
-- listed takes the default of compute_edge_weights_v1.
CREATE TABLE memvault.type_affinity (
    type_a   text NOT NULL,
    type_b   text NOT NULL,
    affinity real NOT NULL CHECK (affinity BETWEEN 0 AND 1),
    PRIMARY KEY (type_a, type_b),
    CHECK (type_a <= type_b)
);
INSERT INTO memvault.type_affinity (type_a, type_b, affinity) VALUES
    ('person', 'person', 1.0), ('organization', 'person', 0.8), ('activity', 'person', 0.7),
    ('person', 'role', 0.7), ('person', 'place', 0.6), ('person', 'topic', 0.6), ('person', 'thing', 0.5),
    ('organization', 'place', 0.7), ('organization', 'organization', 0.5), ('place', 'place', 0.5),
    ('activity', 'activity', 0.5), ('topic', 'topic', 0.6), ('thing', 'thing', 0.4), ('person', 'value', 0.2),
    ('thing', 'value', 0.2), ('value', 'value', 0.1);
GRANT SELECT ON memvault.type_affinity TO memvault_app;

-- Multi-signal edge weights between two entities (a < b), recomputed by each dream; kept = at or above the
-- threshold, and only kept edges feed the communities.
CREATE TABLE memvault.edge_weight (
    vault_id         uuid NOT NULL REFERENCES memvault.vault (id) ON DELETE CASCADE,
    a_id             bigint NOT NULL,
    b_id             bigint NOT NULL,
    co_occurrence    integer NOT NULL,
    co_occ_log       real NOT NULL,
    session_jaccard  real NOT NULL,
    adamic_adar_norm real NOT NULL,
    type_affinity    real NOT NULL,
    semantic_cosine  real NOT NULL,
    weight           real NOT NULL,
    kept             boolean NOT NULL,
    computed_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (vault_id, a_id, b_id),
    CHECK (a_id < b_id),
    FOREIGN KEY (vault_id, a_id) REFERENCES memvault.entity (vault_id, id) ON DELETE CASCADE,
    FOREIGN KEY (vault_id, b_id) REFERENCES memvault.entity (vault_id, id) ON DELETE CASCADE
);
CREATE INDEX edge_weight_b_idx ON memvault.edge_weight (vault_id, b_id);

-- L1 communities (Leiden over the kept edge weights, one partition per resolution) and their members.
CREATE TABLE memvault.community (
    vault_id    uuid NOT NULL REFERENCES memvault.vault (id) ON DELETE CASCADE,
    id          bigint GENERATED ALWAYS AS IDENTITY,
    run_id      bigint,
    resolution  real NOT NULL,
    level       integer NOT NULL DEFAULT 1,
    size        integer NOT NULL,
    label       text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (vault_id, id)
);
CREATE TABLE memvault.community_member (
    vault_id     uuid NOT NULL,
    community_id bigint NOT NULL,
    entity_id    bigint NOT NULL,
    PRIMARY KEY (vault_id, community_id, entity_id),
    FOREIGN KEY (vault_id, community_id) REFERENCES memvault.community (vault_id, id) ON DELETE CASCADE,
    FOREIGN KEY (vault_id, entity_id) REFERENCES memvault.entity (vault_id, id) ON DELETE CASCADE
);
CREATE INDEX community_member_entity_idx ON memvault.community_member (vault_id, entity_id);
-- L2: a community's summary (the summarize task; extractive offline), embedded for GLOBAL recall.
CREATE TABLE memvault.community_summary (
    vault_id     uuid NOT NULL,
    id           bigint GENERATED ALWAYS AS IDENTITY,
    community_id bigint NOT NULL,
    level        integer NOT NULL DEFAULT 2,
    summary      text NOT NULL,
    key_points   text[] NOT NULL DEFAULT '{}',
    embedding    vector,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (vault_id, id),
    UNIQUE (vault_id, community_id),
    FOREIGN KEY (vault_id, community_id) REFERENCES memvault.community (vault_id, id) ON DELETE CASCADE
);

-- Attitudes (seed 004's personality layer): ten categories, each a chain of versions. A newer version of a fact
-- supersedes the older (superseded_at); preferences coexist, each fading as exp(-lambda * days since it was last
-- confirmed); nothing is deleted.
CREATE TABLE memvault.attitude (
    vault_id          uuid NOT NULL REFERENCES memvault.vault (id) ON DELETE CASCADE,
    id                bigint GENERATED ALWAYS AS IDENTITY,
    category          text NOT NULL CHECK (category IN ('writing_style', 'tech_choice', 'design_principle', 'pace',
                                                        'aesthetic', 'communication', 'learning', 'tooling',
                                                        'collaboration', 'values')),
    kind              text NOT NULL DEFAULT 'preference' CHECK (kind IN ('preference', 'fact')),
    statement         text NOT NULL CHECK (length(statement) BETWEEN 1 AND 2000),
    statement_key     text NOT NULL,
    confidence        real NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    evidence          text[] NOT NULL DEFAULT '{}',
    version           integer NOT NULL DEFAULT 1,
    previous_id       bigint,
    confirmed_at      timestamptz NOT NULL DEFAULT now(),
    created_at        timestamptz NOT NULL DEFAULT now(),
    superseded_at     timestamptz,
    PRIMARY KEY (vault_id, id),
    FOREIGN KEY (vault_id, previous_id) REFERENCES memvault.attitude (vault_id, id)
);
CREATE INDEX attitude_previous_idx ON memvault.attitude (vault_id, previous_id);
CREATE UNIQUE INDEX attitude_current_idx ON memvault.attitude (vault_id, category, statement_key)
    WHERE superseded_at IS NULL;

-- Skills: L1 exposure, L2 competent, L3 generative; experience from record_skill_use, halving with disuse.
CREATE TABLE memvault.skill (
    vault_id     uuid NOT NULL REFERENCES memvault.vault (id) ON DELETE CASCADE,
    name         text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    experience   real NOT NULL DEFAULT 0 CHECK (experience >= 0),
    uses         integer NOT NULL DEFAULT 0,
    evidence     text[] NOT NULL DEFAULT '{}',
    last_used_at timestamptz NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (vault_id, name)
);

-- One page of "today's you" per vault and day: top intents, top entities by centrality, what rose and fell.
-- Never pruned by the dream.
CREATE TABLE memvault.daily_snapshot (
    vault_id     uuid NOT NULL REFERENCES memvault.vault (id) ON DELETE CASCADE,
    day          date NOT NULL,
    top_intents  jsonb NOT NULL DEFAULT '[]'::jsonb,
    top_entities jsonb NOT NULL DEFAULT '[]'::jsonb,
    recalls      integer NOT NULL DEFAULT 0,
    delta        jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (vault_id, day)
);

-- Knowledge lint findings (four levels: structure, grounding, judge, confirmation); a finding with a fix waits
-- in the review queue when its impact is high (mark -> check -> commit).
CREATE TABLE memvault.lint_finding (
    vault_id    uuid NOT NULL REFERENCES memvault.vault (id) ON DELETE CASCADE,
    id          bigint GENERATED ALWAYS AS IDENTITY,
    run_id      bigint,
    level       text NOT NULL CHECK (level IN ('structure', 'grounding', 'judge')),
    rule        text NOT NULL,
    key         text NOT NULL,
    subject     jsonb NOT NULL,
    detail      text NOT NULL,
    fix         text CHECK (fix IN ('invalidate_triple', 'retract_block', 'delete_entity')),
    target_id   bigint,
    status      text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'fixed', 'queued', 'dismissed')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    decided_at  timestamptz,
    PRIMARY KEY (vault_id, id),
    UNIQUE (vault_id, rule, key)
);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['edge_weight', 'community', 'community_member', 'community_summary', 'attitude', 'skill',
                             'daily_snapshot', 'lint_finding']
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
