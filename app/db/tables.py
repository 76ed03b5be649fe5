"""SQLAlchemy 2 table models of the schema (the DDL itself lives in ``sql/incremental``).

They document the schema for Python readers, let ``alembic check`` verify that a migrated database matches
what the code expects, and are usable for ad-hoc queries. The service's hot paths call SQL functions.
"""

from __future__ import annotations

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    ARRAY,
    BigInteger,
    Boolean,
    Column,
    Date,
    DateTime,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    REAL,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB, TSVECTOR, UUID

SCHEMA = "memvault"
metadata = MetaData(schema=SCHEMA)

TZ = DateTime(timezone=True)


def _id() -> Column:
    return Column("id", BigInteger, nullable=False)


embedder_config = Table(
    "embedder_config", metadata,
    Column("singleton", Boolean, primary_key=True),
    Column("name", Text, nullable=False),
    Column("dim", Integer, nullable=False),
    Column("configured_at", TZ, nullable=False),
    Column("next_name", Text),
    Column("next_dim", Integer),
)

vault = Table(
    "vault", metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("name", Text, nullable=False, unique=True),
    Column("graph_name", Text, nullable=False, unique=True),
    Column("created_at", TZ, nullable=False),
    Column("settings", JSONB, nullable=False),
    Column("deleted_at", TZ),
)

api_key = Table(
    "api_key", metadata,
    Column("id", Text, primary_key=True),
    Column("vault_id", UUID(as_uuid=True)),
    Column("key_hash", Text, nullable=False),
    Column("created_at", TZ, nullable=False),
    Column("revoked_at", TZ),
    Column("scope", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("created_by", Text, nullable=False),
    Column("last_used_at", TZ),
    ForeignKeyConstraint(["vault_id"], ["memvault.vault.id"], ondelete="CASCADE"),
    Index("api_key_vault_idx", "vault_id"),
)

session = Table(
    "session", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    Column("id", Text, nullable=False),
    Column("started_at", TZ, nullable=False),
    Column("last_turn_at", TZ, nullable=False),
    Column("closed_at", TZ),
    Column("turn_count", Integer, nullable=False),
    Column("summary", Text),
    Column("thread_map", JSONB),
    Column("metadata", JSONB, nullable=False),
    Column("closed_through", Integer, nullable=False),  # turns (by seq) earlier closes extracted (0015)
    Column("segments", Integer, nullable=False),  # closes so far: a closed session reopens for more turns
    PrimaryKeyConstraint("vault_id", "id"),
    ForeignKeyConstraint(["vault_id"], ["memvault.vault.id"], ondelete="CASCADE"),
    Index("session_open_idx", "last_turn_at", postgresql_where="closed_at IS NULL"),
)

turn = Table(
    "turn", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    _id(),
    Column("session_id", Text, nullable=False),
    Column("seq", Integer, nullable=False),
    Column("role", Text, nullable=False),
    Column("content", Text, nullable=False),
    Column("said_at", TZ, nullable=False),
    Column("recorded_at", TZ, nullable=False),
    Column("metadata", JSONB, nullable=False),
    PrimaryKeyConstraint("vault_id", "id"),
    UniqueConstraint("vault_id", "session_id", "seq"),
    ForeignKeyConstraint(["vault_id", "session_id"], ["memvault.session.vault_id", "memvault.session.id"],
                         ondelete="CASCADE"),
)

block = Table(
    "block", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    _id(),
    Column("kind", Text, nullable=False),
    Column("category", Text),
    Column("content", Text, nullable=False),
    Column("normalized", Text, nullable=False),
    Column("norm_spans", JSONB, nullable=False),
    Column("summary", Text),
    Column("digest", Text),
    Column("embedding", Vector()),
    Column("tsv", TSVECTOR, nullable=False),
    Column("fingerprint", BigInteger, nullable=False),
    Column("content_hash", LargeBinary, nullable=False),
    Column("lang", Text),
    Column("token_count", Integer, nullable=False),
    Column("session_id", Text),
    Column("source_kind", Text, nullable=False),
    Column("trust_score", REAL, nullable=False),
    Column("confidence", REAL, nullable=False),
    Column("source_turn_ids", ARRAY(BigInteger), nullable=False),
    Column("tier", Text, nullable=False),
    Column("quarantine_tags", ARRAY(Text), nullable=False),
    Column("ppr_score", REAL, nullable=False),
    Column("valid_at", TZ, nullable=False),
    Column("invalid_at", TZ),
    Column("superseded_by", BigInteger),
    Column("recorded_at", TZ, nullable=False),
    Column("retracted_at", TZ),
    Column("version", Integer, nullable=False),
    Column("metadata", JSONB, nullable=False),
    PrimaryKeyConstraint("vault_id", "id"),
    ForeignKeyConstraint(["vault_id"], ["memvault.vault.id"], ondelete="CASCADE"),
    ForeignKeyConstraint(["vault_id", "superseded_by"], ["memvault.block.vault_id", "memvault.block.id"]),
    Index("block_fingerprint_idx", "vault_id", "fingerprint"),
    Index("block_hash_idx", "vault_id", "content_hash"),
    Index("block_valid_idx", "vault_id", "valid_at"),
    Index("block_session_idx", "vault_id", "session_id", postgresql_where="session_id IS NOT NULL"),
    Index("block_superseded_idx", "vault_id", "superseded_by", postgresql_where="superseded_by IS NOT NULL"),
)

block_history = Table(
    "block_history", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    _id(),
    Column("version", Integer, nullable=False),
    Column("kind", Text, nullable=False),
    Column("category", Text),
    Column("content", Text, nullable=False),
    Column("normalized", Text, nullable=False),
    Column("source_kind", Text, nullable=False),
    Column("trust_score", REAL, nullable=False),
    Column("confidence", REAL, nullable=False),
    Column("tier", Text, nullable=False),
    Column("valid_at", TZ, nullable=False),
    Column("invalid_at", TZ),
    Column("superseded_by", BigInteger),
    Column("recorded_at", TZ, nullable=False),
    Column("retracted_at", TZ),
    Column("replaced_at", TZ, nullable=False),
    PrimaryKeyConstraint("vault_id", "id", "version"),
    ForeignKeyConstraint(["vault_id", "id"], ["memvault.block.vault_id", "memvault.block.id"], ondelete="CASCADE"),
)

# Read-side signals of a block, apart from the wide row (sql/incremental/008-block-usage.sql): a recall's
# write-back updates this narrow row instead of re-indexing the block.
block_usage = Table(
    "block_usage", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    Column("block_id", BigInteger, nullable=False),
    Column("access_count", Integer, nullable=False),
    Column("last_accessed_at", TZ),
    Column("feedback_up", Integer, nullable=False),
    Column("feedback_down", Integer, nullable=False),
    PrimaryKeyConstraint("vault_id", "block_id"),
    ForeignKeyConstraint(["vault_id", "block_id"], ["memvault.block.vault_id", "memvault.block.id"],
                         ondelete="CASCADE"),
)

# The read-time sanitizer's verdict on a block's content, for the rules it was judged under
# (sql/incremental/030-block-read-verdict.sql, app/read/sanitize.py).
block_read_verdict = Table(
    "block_read_verdict", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    Column("block_id", BigInteger, nullable=False),
    Column("rules", Text, nullable=False),
    Column("text_sha256", LargeBinary, nullable=False),
    Column("clean", Boolean, nullable=False),
    Column("judged_at", TZ, nullable=False),
    PrimaryKeyConstraint("vault_id", "block_id"),
    ForeignKeyConstraint(["vault_id", "block_id"], ["memvault.block.vault_id", "memvault.block.id"],
                         ondelete="CASCADE"),
)

# The second dense rail's vectors (sql/incremental/011-rail2.sql, app/read/rail2.py): any model's dimension.
block_rail2 = Table(
    "block_rail2", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    Column("block_id", BigInteger, nullable=False),
    Column("model", Text, nullable=False),
    Column("content_hash", LargeBinary, nullable=False),
    Column("embedding", Vector(), nullable=False),
    Column("embedded_at", TZ, nullable=False),
    PrimaryKeyConstraint("vault_id", "block_id"),
    ForeignKeyConstraint(["vault_id", "block_id"], ["memvault.block.vault_id", "memvault.block.id"],
                         ondelete="CASCADE"),
)

# The sparse rail's narrow table (sql/incremental/028-block-terms.sql): what _sparse_rail_v1/_v2 read of a
# matched block, many rows to a page; kept in step with block by its triggers.
block_terms = Table(
    "block_terms", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    Column("block_id", BigInteger, nullable=False),
    Column("tsv", TSVECTOR, nullable=False),
    Column("valid_at", TZ, nullable=False),
    Column("invalid_at", TZ),
    Column("retracted_at", TZ),
    Column("quarantine_tags", ARRAY(Text), nullable=False),
    PrimaryKeyConstraint("vault_id", "block_id"),
    ForeignKeyConstraint(["vault_id", "block_id"], ["memvault.block.vault_id", "memvault.block.id"],
                         ondelete="CASCADE"),
    Index("block_terms_tsv_idx", "tsv", postgresql_using="gin"),
)

block_source = Table(
    "block_source", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    Column("block_id", BigInteger, nullable=False),
    Column("turn_id", BigInteger),
    Column("session_id", Text),
    Column("source_kind", Text, nullable=False),
    Column("said_at", TZ, nullable=False),
    Column("decision", Text, nullable=False),
    Column("recorded_at", TZ, nullable=False),
    ForeignKeyConstraint(["vault_id", "block_id"], ["memvault.block.vault_id", "memvault.block.id"],
                         ondelete="CASCADE"),
    Index("block_source_block_idx", "vault_id", "block_id"),
    Index("block_source_turn_idx", "vault_id", "turn_id"),
)

entity = Table(
    "entity", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    _id(),
    Column("name", Text, nullable=False),
    Column("canonical_key", Text, nullable=False),
    Column("kind", Text),
    Column("embedding", Vector()),
    Column("mention_count", Integer, nullable=False),
    Column("created_at", TZ, nullable=False),
    PrimaryKeyConstraint("vault_id", "id"),
    UniqueConstraint("vault_id", "canonical_key"),
    ForeignKeyConstraint(["vault_id"], ["memvault.vault.id"], ondelete="CASCADE"),
)

entity_alias = Table(
    "entity_alias", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    Column("alias_key", Text, nullable=False),
    Column("alias", Text, nullable=False),
    Column("entity_id", BigInteger, nullable=False),
    Column("source", Text, nullable=False),
    PrimaryKeyConstraint("vault_id", "alias_key"),
    ForeignKeyConstraint(["vault_id", "entity_id"], ["memvault.entity.vault_id", "memvault.entity.id"],
                         ondelete="CASCADE"),
    Index("entity_alias_entity_idx", "vault_id", "entity_id"),
)

triple = Table(
    "triple", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    _id(),
    Column("subject_id", BigInteger, nullable=False),
    Column("predicate", Text, nullable=False),
    Column("object_id", BigInteger, nullable=False),
    Column("evidence_block_id", BigInteger),
    Column("confidence", REAL, nullable=False),
    Column("valid_at", TZ, nullable=False),
    Column("invalid_at", TZ),
    Column("recorded_at", TZ, nullable=False),
    PrimaryKeyConstraint("vault_id", "id"),
    ForeignKeyConstraint(["vault_id", "subject_id"], ["memvault.entity.vault_id", "memvault.entity.id"],
                         ondelete="CASCADE"),
    ForeignKeyConstraint(["vault_id", "object_id"], ["memvault.entity.vault_id", "memvault.entity.id"],
                         ondelete="CASCADE"),
    ForeignKeyConstraint(["vault_id", "evidence_block_id"], ["memvault.block.vault_id", "memvault.block.id"],
                         ondelete="SET NULL (evidence_block_id)"),
    Index("triple_subject_idx", "vault_id", "subject_id"),
    Index("triple_object_idx", "vault_id", "object_id"),
    Index("triple_evidence_idx", "vault_id", "evidence_block_id"),
)

knowledge_gap = Table(
    "knowledge_gap", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    _id(),
    Column("query", Text, nullable=False),
    Column("query_key", Text, nullable=False),
    Column("incorrect_count", Integer, nullable=False),
    Column("first_seen_at", TZ, nullable=False),
    Column("last_seen_at", TZ, nullable=False),
    Column("resolved_at", TZ),
    PrimaryKeyConstraint("vault_id", "id"),
    UniqueConstraint("vault_id", "query_key"),
    ForeignKeyConstraint(["vault_id"], ["memvault.vault.id"], ondelete="CASCADE"),
)

idempotency_key = Table(
    "idempotency_key", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    Column("key", Text, nullable=False),
    Column("request_hash", LargeBinary, nullable=False),
    Column("status_code", Integer, nullable=False),
    Column("response", JSONB, nullable=False),
    Column("created_at", TZ, nullable=False),
    PrimaryKeyConstraint("vault_id", "key"),
    ForeignKeyConstraint(["vault_id"], ["memvault.vault.id"], ondelete="CASCADE"),
)

recall_log = Table(
    "recall_log", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    _id(),
    Column("at", TZ, nullable=False),
    Column("query", Text, nullable=False),
    Column("intent", Text, nullable=False),
    Column("mode", Text, nullable=False),
    Column("thinking", Text, nullable=False),
    Column("stage_ms", JSONB, nullable=False),
    Column("returned_ids", ARRAY(BigInteger), nullable=False),
    Column("tokens_used", Integer, nullable=False),
    Column("crag_verdict", Text),
    Column("prefetch_hit", Boolean, nullable=False),
    PrimaryKeyConstraint("vault_id", "at", "id"),
    Index("recall_log_vault_at_idx", "vault_id", "at"),
    postgresql_partition_by="RANGE (at)",
)

audit_log = Table(
    "audit_log", metadata,
    Column("vault_id", UUID(as_uuid=True)),
    _id(),
    Column("at", TZ, nullable=False),
    Column("actor", Text, nullable=False),
    Column("action", Text, nullable=False),
    Column("block_id", BigInteger),
    Column("rule", Text),
    Column("ruleset_version", Text),
    Column("detail", JSONB, nullable=False),
    Column("before", JSONB),
    Column("after", JSONB),
    PrimaryKeyConstraint("at", "id"),
    Index("audit_log_vault_at_idx", "vault_id", "at"),
    Index("audit_log_block_idx", "vault_id", "block_id"),
    postgresql_partition_by="RANGE (at)",
)

prefetch_cache = Table(
    "prefetch_cache", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    Column("query_hash", LargeBinary, nullable=False),
    Column("query", Text, nullable=False),
    Column("payload", JSONB, nullable=False),
    Column("confidence", REAL, nullable=False),
    Column("created_at", TZ, nullable=False),
    Column("expires_at", TZ, nullable=False),
    PrimaryKeyConstraint("vault_id", "query_hash"),
    ForeignKeyConstraint(["vault_id"], ["memvault.vault.id"], ondelete="CASCADE"),
    prefixes=["UNLOGGED"],
)

# --- what `alembic check` compares ------------------------------------------------------------------------

_RUNTIME_INDEXES = {"entity_embedding_hnsw"}  # built by configure_embedder_v1()
_RUNTIME_INDEX_PREFIXES = ("block_ann_",)  # each large vault's own HNSW index (app/db/ann_index.py)
_PARTITIONED = ("recall_log_", "audit_log_")


def include_name(name, type_, parent_names) -> bool:
    """Compare only the memvault schema (Procrastinate and AGE graphs own theirs)."""
    if type_ == "schema":
        return name == SCHEMA
    if type_ == "table":
        return name != "alembic_version" and not name.startswith(_PARTITIONED)
    return True


def include_object(obj, name, type_, reflected, compare_to) -> bool:
    if type_ == "index" and (name in _RUNTIME_INDEXES or (name or "").startswith(_RUNTIME_INDEX_PREFIXES)):
        return False
    return True


def compare_type(context, inspected_column, metadata_column, inspected_type, metadata_type):
    """Vector columns get their dimension at run time (configure_embedder_v1); don't flag it."""
    if isinstance(metadata_type, Vector):
        return False
    return None


# --- read track (sql/incremental/003-read.sql) -----------------------------------------------------------------

intent_archetype = Table(
    "intent_archetype", metadata,
    Column("id", BigInteger, primary_key=True),
    Column("intent", Text, nullable=False),
    Column("lang", Text, nullable=False),
    Column("query", Text, nullable=False),
    Column("embedder", Text),
    Column("embedding", Vector()),
    UniqueConstraint("intent", "query"),
)

# The sparse rail's per-vault document frequencies (sql/incremental/009-lexeme-stats.sql).
lexeme_stats = Table(
    "lexeme_stats", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    Column("lexeme", Text, nullable=False),
    Column("ndoc", Integer, nullable=False),
    PrimaryKeyConstraint("vault_id", "lexeme"),
    ForeignKeyConstraint(["vault_id"], ["memvault.vault.id"], ondelete="CASCADE"),
)

lexeme_stats_state = Table(
    "lexeme_stats_state", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    Column("blocks", Integer, nullable=False),
    Column("lexemes", Integer, nullable=False),
    Column("refreshed_at", TZ, nullable=False),
    Column("postings", BigInteger),  # sql/incremental/026-lexeme-postings.sql: BM25's mean block length
    PrimaryKeyConstraint("vault_id"),
    ForeignKeyConstraint(["vault_id"], ["memvault.vault.id"], ondelete="CASCADE"),
)

# When each vault's block ppr_score was computed from its graph (sql/incremental/012-centrality.sql,
# app/background/centrality.py).
graph_centrality_state = Table(
    "graph_centrality_state", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    Column("triples", BigInteger, nullable=False),
    Column("max_triple", BigInteger, nullable=False),
    Column("entities", Integer, nullable=False),
    Column("blocks", Integer, nullable=False),
    Column("computed_at", TZ, nullable=False),
    PrimaryKeyConstraint("vault_id"),
    ForeignKeyConstraint(["vault_id"], ["memvault.vault.id"], ondelete="CASCADE"),
)

# The dream loop (sql/incremental/016-dream.sql, app/background/dream.py): its runs, the pairs it judged, the
# review queue with each vault's thresholds, and the discovery inbox.
dream_run = Table(
    "dream_run", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    _id(),
    Column("trigger", Text, nullable=False),
    Column("dry_run", Boolean, nullable=False),
    Column("status", Text, nullable=False),
    Column("stage", Text),
    Column("stats", JSONB, nullable=False),
    Column("report", JSONB),
    Column("error", Text),
    Column("attempts", Integer, nullable=False),
    Column("started_at", TZ, nullable=False),
    Column("finished_at", TZ),
    Column("wall_ms", Integer),
    PrimaryKeyConstraint("vault_id", "id"),
    ForeignKeyConstraint(["vault_id"], ["memvault.vault.id"], ondelete="CASCADE"),
    Index("dream_run_unfinished_idx", "vault_id", unique=True, postgresql_where="status <> 'done' AND NOT dry_run"),
    Index("dream_run_done_idx", "vault_id", "finished_at", postgresql_where="status = 'done' AND NOT dry_run"),
)

dream_conflict = Table(
    "dream_conflict", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    _id(),
    Column("run_id", BigInteger, nullable=False),
    Column("old_block_id", BigInteger, nullable=False),
    Column("new_block_id", BigInteger, nullable=False),
    Column("source", Text, nullable=False),
    Column("detail", JSONB, nullable=False),
    Column("status", Text, nullable=False),
    Column("action", Text),
    Column("confidence", REAL),
    Column("reason", Text),
    Column("judge", Text),
    Column("found_at", TZ, nullable=False),
    Column("decided_at", TZ),
    PrimaryKeyConstraint("vault_id", "id"),
    UniqueConstraint("vault_id", "old_block_id", "new_block_id"),
    ForeignKeyConstraint(["vault_id"], ["memvault.vault.id"], ondelete="CASCADE"),
    ForeignKeyConstraint(["vault_id", "old_block_id"], ["memvault.block.vault_id", "memvault.block.id"],
                         ondelete="CASCADE"),
    ForeignKeyConstraint(["vault_id", "new_block_id"], ["memvault.block.vault_id", "memvault.block.id"],
                         ondelete="CASCADE"),
    Index("dream_conflict_status_idx", "vault_id", "status"),
    Index("dream_conflict_new_idx", "vault_id", "new_block_id"),
)

review_queue = Table(
    "review_queue", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    _id(),
    Column("kind", Text, nullable=False),
    Column("ref_id", BigInteger, nullable=False),
    Column("proposal", JSONB, nullable=False),
    Column("confidence", REAL, nullable=False),
    Column("impact", REAL, nullable=False),
    Column("reason", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("checked", JSONB),
    Column("claimed_by", Text),
    Column("overdue_count", Integer, nullable=False),
    Column("due_at", TZ, nullable=False),
    Column("created_at", TZ, nullable=False),
    Column("decided_at", TZ),
    Column("decided_by", Text),
    Column("note", Text),
    PrimaryKeyConstraint("vault_id", "id"),
    UniqueConstraint("vault_id", "kind", "ref_id"),
    ForeignKeyConstraint(["vault_id"], ["memvault.vault.id"], ondelete="CASCADE"),
    Index("review_queue_open_idx", "vault_id", "due_at", postgresql_where="status IN ('PENDING', 'CLAIMED')"),
)

review_threshold = Table(
    "review_threshold", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    Column("kind", Text, nullable=False),
    Column("min_confidence", REAL, nullable=False),
    Column("max_impact", REAL, nullable=False),
    Column("approved", Integer, nullable=False),
    Column("rejected", Integer, nullable=False),
    Column("updated_at", TZ, nullable=False),
    PrimaryKeyConstraint("vault_id", "kind"),
    ForeignKeyConstraint(["vault_id"], ["memvault.vault.id"], ondelete="CASCADE"),
)

discovery_inbox = Table(
    "discovery_inbox", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    _id(),
    Column("kind", Text, nullable=False),
    Column("key", Text, nullable=False),
    Column("title", Text, nullable=False),
    Column("detail", JSONB, nullable=False),
    Column("score", REAL, nullable=False),
    Column("run_id", BigInteger),
    Column("created_at", TZ, nullable=False),
    Column("dismissed_at", TZ),
    PrimaryKeyConstraint("vault_id", "id"),
    UniqueConstraint("vault_id", "kind", "key"),
    ForeignKeyConstraint(["vault_id"], ["memvault.vault.id"], ondelete="CASCADE"),
)

# What the dream learns (sql/incremental/020-dream-graph.sql): reference data (canonical predicates, type
# affinities), multi-signal edges, communities and their summaries, attitudes, skills, daily snapshots, lint.
canonical_predicate = Table(
    "canonical_predicate", metadata,
    Column("predicate", Text, nullable=False),
    Column("domain", Text, nullable=False),
    Column("range", Text, nullable=False),
    Column("single_valued", Boolean, nullable=False),
    Column("description", Text, nullable=False),
    PrimaryKeyConstraint("predicate"),
)

# Other names of the canonical predicates, for the consolidate stage's normalization
# (sql/incremental/022-dream-consolidate.sql).
predicate_alias = Table(
    "predicate_alias", metadata,
    Column("alias", Text, nullable=False),
    Column("predicate", Text, nullable=False),
    PrimaryKeyConstraint("alias"),
    ForeignKeyConstraint(["predicate"], ["memvault.canonical_predicate.predicate"]),
    Index("predicate_alias_predicate_idx", "predicate"),
)

type_affinity = Table(
    "type_affinity", metadata,
    Column("type_a", Text, nullable=False),
    Column("type_b", Text, nullable=False),
    Column("affinity", REAL, nullable=False),
    PrimaryKeyConstraint("type_a", "type_b"),
)

edge_weight = Table(
    "edge_weight", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    Column("a_id", BigInteger, nullable=False),
    Column("b_id", BigInteger, nullable=False),
    Column("co_occurrence", Integer, nullable=False),
    Column("co_occ_log", REAL, nullable=False),
    Column("session_jaccard", REAL, nullable=False),
    Column("adamic_adar_norm", REAL, nullable=False),
    Column("type_affinity", REAL, nullable=False),
    Column("semantic_cosine", REAL, nullable=False),
    Column("weight", REAL, nullable=False),
    Column("kept", Boolean, nullable=False),
    Column("computed_at", TZ, nullable=False),
    PrimaryKeyConstraint("vault_id", "a_id", "b_id"),
    ForeignKeyConstraint(["vault_id"], ["memvault.vault.id"], ondelete="CASCADE"),
    ForeignKeyConstraint(["vault_id", "a_id"], ["memvault.entity.vault_id", "memvault.entity.id"], ondelete="CASCADE"),
    ForeignKeyConstraint(["vault_id", "b_id"], ["memvault.entity.vault_id", "memvault.entity.id"], ondelete="CASCADE"),
    Index("edge_weight_b_idx", "vault_id", "b_id"),
)

community = Table(
    "community", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    _id(),
    Column("run_id", BigInteger),
    Column("resolution", REAL, nullable=False),
    Column("level", Integer, nullable=False),
    Column("size", Integer, nullable=False),
    Column("label", Text, nullable=False),
    Column("created_at", TZ, nullable=False),
    PrimaryKeyConstraint("vault_id", "id"),
    ForeignKeyConstraint(["vault_id"], ["memvault.vault.id"], ondelete="CASCADE"),
)

community_member = Table(
    "community_member", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    Column("community_id", BigInteger, nullable=False),
    Column("entity_id", BigInteger, nullable=False),
    PrimaryKeyConstraint("vault_id", "community_id", "entity_id"),
    ForeignKeyConstraint(["vault_id", "community_id"], ["memvault.community.vault_id", "memvault.community.id"],
                         ondelete="CASCADE"),
    ForeignKeyConstraint(["vault_id", "entity_id"], ["memvault.entity.vault_id", "memvault.entity.id"],
                         ondelete="CASCADE"),
    Index("community_member_entity_idx", "vault_id", "entity_id"),
)

community_summary = Table(
    "community_summary", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    _id(),
    Column("community_id", BigInteger, nullable=False),
    Column("level", Integer, nullable=False),
    Column("summary", Text, nullable=False),
    Column("key_points", ARRAY(Text), nullable=False),
    Column("embedding", Vector()),
    Column("created_at", TZ, nullable=False),
    PrimaryKeyConstraint("vault_id", "id"),
    UniqueConstraint("vault_id", "community_id"),
    ForeignKeyConstraint(["vault_id", "community_id"], ["memvault.community.vault_id", "memvault.community.id"],
                         ondelete="CASCADE"),
)

attitude = Table(
    "attitude", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    _id(),
    Column("category", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("statement", Text, nullable=False),
    Column("statement_key", Text, nullable=False),
    Column("confidence", REAL, nullable=False),
    Column("evidence", ARRAY(Text), nullable=False),
    Column("version", Integer, nullable=False),
    Column("previous_id", BigInteger),
    Column("confirmed_at", TZ, nullable=False),
    Column("created_at", TZ, nullable=False),
    Column("superseded_at", TZ),
    PrimaryKeyConstraint("vault_id", "id"),
    ForeignKeyConstraint(["vault_id"], ["memvault.vault.id"], ondelete="CASCADE"),
    ForeignKeyConstraint(["vault_id", "previous_id"], ["memvault.attitude.vault_id", "memvault.attitude.id"]),
    Index("attitude_previous_idx", "vault_id", "previous_id"),
    Index("attitude_current_idx", "vault_id", "category", "statement_key", unique=True,
          postgresql_where="superseded_at IS NULL"),
)

skill = Table(
    "skill", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    Column("name", Text, nullable=False),
    Column("experience", REAL, nullable=False),
    Column("uses", Integer, nullable=False),
    Column("evidence", ARRAY(Text), nullable=False),
    Column("last_used_at", TZ, nullable=False),
    Column("created_at", TZ, nullable=False),
    PrimaryKeyConstraint("vault_id", "name"),
    ForeignKeyConstraint(["vault_id"], ["memvault.vault.id"], ondelete="CASCADE"),
)

daily_snapshot = Table(
    "daily_snapshot", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    Column("day", Date, nullable=False),
    Column("top_intents", JSONB, nullable=False),
    Column("top_entities", JSONB, nullable=False),
    Column("recalls", Integer, nullable=False),
    Column("delta", JSONB, nullable=False),
    Column("created_at", TZ, nullable=False),
    PrimaryKeyConstraint("vault_id", "day"),
    ForeignKeyConstraint(["vault_id"], ["memvault.vault.id"], ondelete="CASCADE"),
)

lint_finding = Table(
    "lint_finding", metadata,
    Column("vault_id", UUID(as_uuid=True), nullable=False),
    _id(),
    Column("run_id", BigInteger),
    Column("level", Text, nullable=False),
    Column("rule", Text, nullable=False),
    Column("key", Text, nullable=False),
    Column("subject", JSONB, nullable=False),
    Column("detail", Text, nullable=False),
    Column("fix", Text),
    Column("target_id", BigInteger),
    Column("status", Text, nullable=False),
    Column("created_at", TZ, nullable=False),
    Column("decided_at", TZ),
    PrimaryKeyConstraint("vault_id", "id"),
    UniqueConstraint("vault_id", "rule", "key"),
    ForeignKeyConstraint(["vault_id"], ["memvault.vault.id"], ondelete="CASCADE"),
)
