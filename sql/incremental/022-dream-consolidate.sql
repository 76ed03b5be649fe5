-- The dream's contradiction scan proposes a fourth kind of pair (sql/idempotent/140-dream-scan.sql): 'value', two
-- statements about the same thing that carry different values (a knowledge update).
ALTER TABLE memvault.dream_conflict DROP CONSTRAINT dream_conflict_source_check;
ALTER TABLE memvault.dream_conflict ADD CONSTRAINT dream_conflict_source_check
    CHECK (source IN ('slot', 'semantic', 'value', 'duplicate'));

-- Reference data for the consolidate stage's normalization (sql/idempotent/150-dream-normalize.sql): the other
-- names a triple's predicate comes under (an LLM extractor's free wording, an import, an older extractor), each
-- mapped to its canonical predicate. A predicate is first folded (lower case, words joined by '_'), then looked
-- up here; one that is neither canonical nor listed is kept as folded.
CREATE TABLE memvault.predicate_alias (
    alias     text PRIMARY KEY CHECK (alias ~ '^[a-z][a-z0-9_]*$'),
    predicate text NOT NULL REFERENCES memvault.canonical_predicate (predicate)
);
INSERT INTO memvault.predicate_alias (alias, predicate) VALUES
    ('live_in', 'lives_in'), ('lived_in', 'lives_in'), ('living_in', 'lives_in'), ('resides_in', 'lives_in'),
    ('reside_in', 'lives_in'), ('resident_of', 'lives_in'),
    ('move_to', 'moved_to'), ('relocated_to', 'moved_to'), ('relocate_to', 'moved_to'),
    ('was_born_in', 'born_in'), ('birthplace', 'born_in'), ('place_of_birth', 'born_in'),
    ('visit', 'visited'), ('went_to', 'visited'), ('traveled_to', 'visited'), ('travelled_to', 'visited'),
    ('work_at', 'works_at'), ('works_for', 'works_at'), ('work_for', 'works_at'), ('worked_at', 'works_at'),
    ('employed_at', 'works_at'), ('employed_by', 'works_at'), ('employer', 'works_at'),
    ('work_as', 'works_as'), ('worked_as', 'works_as'), ('employed_as', 'works_as'), ('occupation', 'works_as'),
    ('profession', 'works_as'),
    ('married', 'married_to'), ('is_married_to', 'married_to'), ('spouse', 'married_to'),
    ('spouse_of', 'married_to'), ('wife_of', 'married_to'), ('husband_of', 'married_to'),
    ('like', 'likes'), ('liked', 'likes'), ('love', 'likes'), ('loves', 'likes'), ('enjoy', 'likes'),
    ('enjoys', 'likes'), ('is_into', 'likes'),
    ('dislike', 'dislikes'), ('disliked', 'dislikes'), ('hate', 'dislikes'), ('hates', 'dislikes'),
    ('prefer', 'prefers'), ('preferred', 'prefers'),
    ('use', 'uses'), ('used', 'uses'), ('using', 'uses'),
    ('study', 'studies'), ('studied', 'studies'), ('studying', 'studies'), ('majors_in', 'studies'),
    ('play', 'plays'), ('played', 'plays'), ('playing', 'plays'),
    ('have', 'has'), ('had', 'has'), ('own', 'has'), ('owns', 'has'), ('owned', 'has'),
    ('is_an', 'is_a'), ('instance_of', 'is_a'), ('type_of', 'is_a'), ('kind_of', 'is_a'),
    ('years_old', 'age'), ('age_is', 'age'),
    ('email_address', 'email'), ('e_mail', 'email'),
    ('phone_number', 'phone'), ('telephone', 'phone'), ('mobile', 'phone'),
    ('postal_address', 'address'), ('home_address', 'address'),
    ('named', 'name'), ('called', 'name'),
    ('state', 'status');
CREATE INDEX predicate_alias_predicate_idx ON memvault.predicate_alias (predicate);
GRANT SELECT ON memvault.predicate_alias TO memvault_app;
