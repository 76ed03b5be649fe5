-- memvault's SQL statements, by name (procrastinate's queries.sql is the model): each statement Python sends to
-- the database is one of these, loaded once by app/db/queries.py and named in code as Q.<name>. A statement starts
-- with a "-- name --" line; the "--" lines right under it describe it (where it is used). Most call a versioned
-- function of sql/idempotent/; the few that read or write tables directly are small and stay here, in SQL files.
-- Python code outside app/db/ holds no SQL text (tests/unit/test_no_sql_in_python.py).

-- recall_fast --
-- app/read/search.py
SELECT * FROM memvault.recall_fast_v2(%s, %s, %s, %s, %s::jsonb, %s::jsonb, %s);

-- recall_fast_scoped --
-- app/read/search.py, through app/read/unit.py (RecallUnit.execute: the vault and the actor first, from the unit)
SELECT * FROM memvault.recall_fast_v3(%s::uuid, %s, %s, %s, %s, %s, %s::jsonb, %s::jsonb, %s, %s);

-- recall_fast_given --
-- app/read/search.py: recall_fast with the sparse side sent ahead (app/read/ahead.py), in an open transaction
SELECT * FROM memvault.recall_fast_v4(%s, %s, %s, %s::jsonb, %s::jsonb, %s, %s::bigint[], %s::bigint[]);

-- recall_fast_given_scoped --
-- app/read/search.py, through app/read/unit.py (RecallUnit.execute: the vault and the actor first, from the unit)
SELECT * FROM memvault.recall_fast_v5(%s::uuid, %s, %s, %s, %s, %s::jsonb, %s::jsonb, %s, %s::bigint[], %s::bigint[],
                                      %s);

-- sparse_ahead --
-- app/read/ahead.py, through Database.scoped (the vault and the actor first, from the recall's vault)
SELECT * FROM memvault.sparse_ahead_v1(%s::uuid, %s, %s, %s, %s, %s::jsonb);

-- sparse_ahead_probed --
-- app/read/ahead.py, through Database.scoped: sparse_ahead with the prefetch probe (NULL hash: none)
SELECT * FROM memvault.sparse_ahead_v2(%s::uuid, %s, %s, %s, %s, %s::jsonb, %s::bytea);

-- score_candidates --
-- app/read/search.py
SELECT * FROM memvault.score_candidates_v2(%s::bigint[], %s::float8[], %s, %s, %s, %s::jsonb, %s);

-- vault_block_count --
-- app/read/search.py
SELECT memvault.vault_block_count_v1(%s) AS n;

-- touch_blocks --
-- app/read/recall.py
SELECT set_config('synchronous_commit', 'off', true) AS sync, memvault.touch_blocks_v1(%s::bigint[], %s) AS n;

-- record_recall --
-- app/read/recall.py
SELECT * FROM memvault.record_recall_v1(%s::bigint[], %s, %s, %s, %s, %s::jsonb, %s, %s, %s, %s::jsonb, %s);

-- set_read_verdicts --
-- app/write/pipeline.py, app/read/recall.py
SELECT memvault.set_read_verdicts_v1(%s::bigint[], %s, %s::bytea[], %s::boolean[]) AS n;

-- record_recall_scoped --
-- app/read/recall.py, through app/read/unit.py (RecallUnit.execute: the vault and the actor first, from the unit)
SELECT * FROM memvault.record_recall_v2(%s::uuid, %s, %s::bigint[], %s, %s, %s, %s, %s::jsonb, %s, %s, %s, %s::jsonb, %s,
                                        %s, %s::bigint[], %s::bytea[], %s::boolean[]);

-- session_neighbours --
-- app/read/continuity.py
SELECT * FROM memvault.session_neighbours_v1(%s::bigint[], %s);

-- hop_dense --
-- app/read/hops.py
SELECT * FROM memvault.hop_dense_v1(%s::bigint[], %s, %s);

-- hop_entities --
-- app/read/hops.py
SELECT * FROM memvault.hop_entities_v1(%s::bigint[], %s, %s, %s, %s, %s);

-- knowledge_gap_for --
-- app/read/gap.py
SELECT * FROM memvault.knowledge_gap_for_v1(%s);

-- intent_distribution --
-- app/read/router.py
SELECT * FROM memvault.intent_distribution_v1();

-- vault_by_id --
-- app/read/vault_ref.py
SELECT id, name, graph_name, created_at, deleted_at FROM memvault.vault_by_id_v1(%s);

-- archetypes_to_embed --
-- app/read/classify.py
SELECT * FROM memvault.archetypes_to_embed_v1(%s);

-- set_archetype_embeddings --
-- app/read/classify.py
SELECT memvault.set_archetype_embeddings_v1(%s, %s, %b) AS n;

-- archetypes --
-- app/read/classify.py
SELECT * FROM memvault.archetypes_v1(%s);

-- cascade_seed_entities --
-- app/read/cascade.py
SELECT * FROM memvault.cascade_seed_entities_v1(%s, %s::bigint[], %s);

-- graph_expand --
-- app/read/cascade.py
SELECT * FROM memvault.graph_expand_v1(%s::bigint[], %s, %s);

-- community_evidence --
-- app/read/cascade.py
SELECT * FROM memvault.community_evidence_v1(%s::bigint[], %s, %s);

-- community_summaries --
-- app/read/cascade.py
SELECT * FROM memvault.community_summaries_v1(%s, %s);

-- name_frequencies --
-- app/read/funnel.py
SELECT n.name, (SELECT min(s.freq) FROM memvault.lexeme_stats_v1(
                    tsvector_to_array(memvault.sparse_document_v1(n.name))) AS s) AS freq
FROM unnest(%s::text[]) AS n(name);

-- refresh_lexeme_stats --
-- app/read/lexeme_stats.py
SELECT memvault.refresh_lexeme_stats_v1(%s) AS n;

-- lexeme_stats_due --
-- app/read/lexeme_stats.py
SELECT vault_id, blocks, counted FROM memvault.lexeme_stats_due_v1(%s, %s);

-- prefetch_context --
-- app/read/prefetch.py
SELECT * FROM memvault.prefetch_context_v1(%s, %s);

-- prefetch_recent --
-- app/read/prefetch.py
SELECT * FROM memvault.prefetch_recent_v1(%s, make_interval(secs => %s));

-- seconds_since --
-- app/read/prefetch.py
SELECT extract(epoch FROM now() - %s::timestamptz) AS s;

-- prefetch_put --
-- app/read/prefetch.py
SELECT memvault.prefetch_put_v1(%s, %s, %s::jsonb, %s::real, %s::integer) AS expires_at;

-- audit_read_sanitize --
-- app/read/prefetch.py
SELECT memvault.audit_read_sanitize_v1(%s::jsonb) AS n;

-- prefetch_get --
-- app/read/prefetch.py
SELECT * FROM memvault.prefetch_get_v1(%s);

-- prefetch_get_scoped --
-- app/read/prefetch.py, through app/read/unit.py (RecallUnit.execute: the vault and the actor first, from the unit)
SELECT * FROM memvault.prefetch_get_v2(%s::uuid, %s, %s);

-- centrality_edges --
-- app/background/centrality.py
SELECT * FROM memvault.centrality_edges_v1();

-- apply_centrality --
-- app/background/centrality.py
SELECT memvault.apply_centrality_v1(%s::bigint[], %s::real[], %s, %s) AS n;

-- centrality_due --
-- app/background/centrality.py
SELECT * FROM memvault.centrality_due_v1();

-- idempotency_get --
-- app/write/idempotency.py
SELECT request_hash, response FROM memvault.idempotency_key WHERE vault_id = %s AND key = %s;

-- idempotency_put --
-- app/write/idempotency.py
INSERT INTO memvault.idempotency_key (vault_id, key, request_hash, status_code, response) VALUES (%s, %s, %s, 200, %s::jsonb) ON CONFLICT DO NOTHING RETURNING key;

-- vault_overview --
-- app/interfaces/inspector.py
SELECT * FROM memvault.vault_overview_v1();

-- recent_blocks --
-- app/interfaces/inspector.py
SELECT * FROM memvault.recent_blocks_v1(%s);

-- block_times --
-- app/interfaces/inspector.py: when each recalled memory was recorded (transaction time), beside when it was said
SELECT id, valid_at, recorded_at FROM memvault.block
WHERE vault_id = memvault.current_vault_id() AND id = ANY(%(ids)s::bigint[]);

-- configure_embedder --
-- app/services.py
SELECT * FROM memvault.configure_embedder_v1(%s, %s);

-- defer_job --
-- app/worker/app.py
SELECT memvault.defer_job_v1(%s, %s::jsonb, %s, %s) AS id;

-- health --
-- app/api/health.py: live workers (a heartbeat within %(alive_s)s seconds), the jobs waiting and running, how long
-- the oldest job due has waited (since it was deferred or scheduled), and how long ago a job last started.
SELECT current_setting('server_version') AS server_version,
(SELECT extversion FROM pg_extension WHERE extname = 'vector') AS vector,
(SELECT extversion FROM pg_extension WHERE extname = 'age') AS age,
(SELECT count(*) FROM public.procrastinate_workers
  WHERE last_heartbeat > now() - make_interval(secs => %(alive_s)s)) AS live_workers,
(SELECT count(*) FROM public.procrastinate_jobs WHERE status = 'todo') AS queued_jobs,
(SELECT count(*) FROM public.procrastinate_jobs WHERE status = 'doing') AS running_jobs,
(SELECT extract(epoch FROM now() - min(greatest(j.scheduled_at, queued.at)))
   FROM public.procrastinate_jobs j,
        LATERAL (SELECT max(e.at) AS at FROM public.procrastinate_events e
                  WHERE e.job_id = j.id AND e.type IN ('deferred', 'deferred_for_retry', 'retried')) queued
  WHERE j.status = 'todo' AND (j.scheduled_at IS NULL OR j.scheduled_at <= now())) AS oldest_due_s,
(SELECT extract(epoch FROM now() - e.at) FROM public.procrastinate_events e
  WHERE e.type = 'started' ORDER BY e.id DESC LIMIT 1) AS last_start_s;

-- reembed_abort --
-- app/commands.py
SELECT memvault.reembed_abort_v1();

-- count_vectors --
-- app/commands.py
SELECT (SELECT count(*) FROM memvault.block) + (SELECT count(*) FROM memvault.entity);

-- graph_rebuild --
-- app/commands.py
SELECT memvault.graph_rebuild_v1(%s) AS edges;

-- graph_counts --
-- app/commands.py
SELECT * FROM memvault.graph_counts_v1(%s);

-- list_blocks --
-- app/api/browse.py
SELECT * FROM memvault.list_blocks_v1(%s, %s, %s);

-- patch_block --
-- app/api/browse.py
SELECT memvault.patch_block_v1(%s, %s);

-- list_turns --
-- app/api/browse.py
SELECT * FROM memvault.list_turns_v1(%s, %s, %s);

-- session_exists --
-- app/api/browse.py
SELECT 1 AS x FROM memvault.session WHERE vault_id = %s AND id = %s;

-- list_sessions --
-- app/api/browse.py
SELECT * FROM memvault.list_sessions_v1(%s, %s, %s, %s);

-- list_entities --
-- app/api/browse.py
SELECT * FROM memvault.list_entities_v1(%s, %s, %s, %s);

-- entity_neighbourhood --
-- app/api/browse.py
SELECT * FROM memvault.entity_neighbourhood_v1(%s, %s, %s, %s);

-- find_entity --
-- app/api/browse.py
SELECT * FROM memvault.find_entity_v1(%s, %s);

-- reembed_blocks_due --
-- app/reembed.py: the next blocks without a vector of the new embedder (their text: items.embedding_text)
SELECT vault_id, id, metadata->>'context' AS context, normalized FROM memvault.block
WHERE embedding_next IS NULL ORDER BY vault_id, id LIMIT %s;

-- reembed_block_put --
-- app/reembed.py
UPDATE memvault.block SET embedding_next = %s WHERE vault_id = %s AND id = %s;

-- reembed_entities_due --
-- app/reembed.py
SELECT vault_id, id, name FROM memvault.entity WHERE embedding_next IS NULL ORDER BY vault_id, id LIMIT %s;

-- reembed_entity_put --
-- app/reembed.py
UPDATE memvault.entity SET embedding_next = %s WHERE vault_id = %s AND id = %s;

-- reembed_begin --
-- app/reembed.py
SELECT memvault.reembed_begin_v1(%s, %s);

-- reembed_switch --
-- app/reembed.py
SELECT memvault.reembed_switch_v1();

-- build_due_ann_indexes --
-- app/reembed.py
SELECT memvault.build_due_ann_indexes_v1(%s);

-- embedder_next --
-- app/reembed.py
SELECT next_name FROM memvault.embedder_config;

-- reembed_pending --
-- app/reembed.py
SELECT count(*) FROM memvault.block WHERE embedding_next IS NULL;

-- rail2_due --
-- app/read/rail2.py: a vault's blocks whose second-rail row is missing or stale (content or model changed), with
-- what their text is made of (app.write.items.embedding_text)
SELECT b.id, b.content_hash, b.metadata->>'context' AS context, b.normalized
FROM memvault.block b
LEFT JOIN memvault.block_rail2 r ON r.vault_id = b.vault_id AND r.block_id = b.id
WHERE b.embedding IS NOT NULL
  AND (r.block_id IS NULL OR r.model <> %(model)s OR r.content_hash <> b.content_hash)
  AND b.vault_id = %(vault)s
ORDER BY b.id
LIMIT %(n)s;

-- rail2_vaults_due --
-- app/read/rail2.py: vaults with blocks still to embed, for the job
SELECT id FROM memvault.rail2_vaults_due_v1(%(model)s);

-- rail2_put --
-- app/read/rail2.py
INSERT INTO memvault.block_rail2 (vault_id, block_id, model, content_hash, embedding)
SELECT %(vault)s, u.id, %(model)s, u.hash, u.vec::vector
FROM unnest(%(ids)s::bigint[], %(hashes)s::bytea[], %(vecs)s::text[]) AS u(id, hash, vec)
ON CONFLICT (vault_id, block_id) DO UPDATE
    SET model = EXCLUDED.model, content_hash = EXCLUDED.content_hash, embedding = EXCLUDED.embedding,
        embedded_at = now();

-- session_turn_counts --
-- app/importers/run.py
SELECT id, turn_count FROM memvault.session WHERE vault_id = %s AND id = ANY(%s);

-- api_key_lookup --
-- app/auth.py
SELECT * FROM memvault.api_key_lookup_v1(%s);

-- api_key_touch --
-- app/auth.py
SELECT memvault.api_key_touch_v1(%s);

-- api_key_create --
-- app/keys.py
SELECT * FROM memvault.api_key_create_v1(%s, %s, %s, %s, %s);

-- api_key_list_all --
-- app/keys.py
SELECT * FROM memvault.api_key_list_v1(NULL, true);

-- api_key_list --
-- app/keys.py
SELECT * FROM memvault.api_key_list_v1(%s);

-- api_key_by_id --
-- app/keys.py
SELECT * FROM memvault.api_key_list_v1(NULL, true) WHERE id = %s;

-- api_key_revoke --
-- app/keys.py
SELECT * FROM memvault.api_key_revoke_v1(%s);

-- api_key_active_count --
-- app/keys.py
SELECT memvault.api_key_active_count_v1() AS n;

-- lock_vault_writes --
-- app/write/serial.py: first in a write's transaction (Dedup's read, decision and apply, one vault at a time)
SELECT memvault.lock_vault_writes_v1(%(vault)s);

-- allocate_block_ids --
-- app/write/pipeline.py
SELECT memvault.allocate_block_ids_v1(%s) AS id;

-- revise_blocks --
-- app/write/pipeline.py
SELECT memvault.revise_blocks_v1(%s, %s::jsonb, %b);

-- record_sources --
-- app/write/pipeline.py
SELECT memvault.record_sources_v1(%s, %s::jsonb);

-- audit --
-- app/write/pipeline.py
SELECT memvault.audit_v1(%s, %s::jsonb);

-- dedup_candidates --
-- app/write/pipeline.py
SELECT item, block_id, cosine, kind, category, content, fingerprint, same_hash, nearest FROM memvault.dedup_candidates_v3(%s, %b, %s, %s, %s::integer, %s::real);

-- dedup_candidate_rows --
-- app/write/pipeline.py: the rows for the pairs the bulk path's vector mirror found
SELECT item, block_id, cosine, kind, category, content, fingerprint, same_hash, nearest FROM memvault.dedup_candidate_rows_v1(%s, %s::integer[], %s::bigint[], %b, %s, %s, %s::integer, %s::real);

-- dedup_vectors_since --
-- app/write/mirror.py
SELECT * FROM memvault.dedup_vectors_since_v2(%s, %s);

-- insert_blocks --
-- app/write/pipeline.py
SELECT memvault.insert_blocks_v2(%s, %s, %s::jsonb, %b);

-- session_row --
-- app/write/sessions.py
SELECT * FROM memvault.session WHERE vault_id = %s AND id = %s;

-- session_segment_turns --
-- app/write/sessions.py
SELECT * FROM memvault.session_segment_turns_v1(%s, %s);

-- close_session --
-- app/write/sessions.py
SELECT * FROM memvault.close_session_v2(%s, %s, %s, %s::jsonb, %s);

-- idle_sessions --
-- app/write/sessions.py
SELECT vault, id FROM memvault.idle_sessions_v1(%s);

-- related_topics --
-- app/write/sessions.py
SELECT DISTINCT ON (session_id) session_id, content, 1 - (embedding <=> %s) AS cosine FROM memvault.block WHERE vault_id = %s AND kind = 'unit' AND category = 'Topic' AND session_id IS DISTINCT FROM %s AND retracted_at IS NULL AND 1 - (embedding <=> %s) >= 0.7 ORDER BY session_id, cosine DESC;

-- last_turn --
-- app/write/sessions.py
SELECT content FROM memvault.turn WHERE vault_id = %s AND session_id = %s ORDER BY seq DESC LIMIT 1;

-- append_turns --
-- app/write/sessions.py
SELECT * FROM memvault.append_turns_v2(%s, %s, %s::jsonb);

-- last_turns --
-- app/write/bulk.py
SELECT DISTINCT ON (session_id) session_id, content FROM memvault.turn WHERE vault_id = %s AND session_id = ANY(%s) ORDER BY session_id, seq DESC;

-- create_vault --
-- app/vaults.py
SELECT * FROM memvault.create_vault_v1(%s);

-- vault_by_name --
-- app/vaults.py
SELECT * FROM memvault.vault_by_name_v1(%s);

-- list_vaults --
-- app/vaults.py
SELECT * FROM memvault.list_vaults_v1(%(after)s, %(limit)s);

-- soft_delete_vault --
-- app/vaults.py
SELECT memvault.soft_delete_vault_v1(%s) AS at;

-- purge_vault --
-- app/vaults.py
SELECT memvault.purge_vault_v1(%s) AS purged;

-- graph_blocks --
-- app/write/graph.py
SELECT id, content, source_kind, valid_at FROM memvault.block WHERE vault_id = %s AND id = ANY(%s) AND retracted_at IS NULL AND kind <> 'summary' ORDER BY id;

-- graph_build_lock --
-- app/write/graph.py
SELECT pg_advisory_xact_lock(hashtext('memvault.graph_build'), hashtext(%s));

-- evidence_triples --
-- app/write/graph.py
SELECT subject_id, predicate, object_id, evidence_block_id FROM memvault.triple WHERE vault_id = %s AND evidence_block_id = ANY(%s);

-- graph_replaced_blocks --
-- app/write/graph.py: the blocks these blocks superseded (their relations end)
SELECT o.id, o.content, o.source_kind, n.valid_at FROM memvault.block o JOIN memvault.block n ON n.vault_id = o.vault_id AND n.id = o.superseded_by WHERE o.vault_id = %s AND o.superseded_by = ANY(%s) AND o.kind <> 'summary';

-- end_replaced_triples --
-- app/write/graph.py
SELECT memvault.end_replaced_triples_v1(%s, %s::jsonb);

-- insert_triples --
-- app/write/graph.py
SELECT * FROM memvault.insert_triples_v2(%s, %s::jsonb);

-- add_entity_mentions --
-- app/write/graph.py
SELECT memvault.add_entity_mentions_v1(%s, %s::bigint[], %s::integer[]);

-- graph_add --
-- app/write/graph.py
SELECT memvault.graph_add_v1(%s, %s::jsonb, %s::jsonb);

-- vault_entities --
-- app/write/graph.py
SELECT id, name, canonical_key, embedding FROM memvault.entity WHERE vault_id = %s;

-- vault_aliases --
-- app/write/graph.py
SELECT alias_key, entity_id FROM memvault.entity_alias WHERE vault_id = %s;

-- upsert_entities --
-- app/write/graph.py
SELECT * FROM memvault.upsert_entities_v1(%s, %s::jsonb, %b);

-- add_alias --
-- app/write/graph.py
SELECT memvault.add_alias_v1(%s, %s, %s, %s, %s);

-- block_with_usage --
-- app/write/memories.py
SELECT b.*, coalesce(u.access_count, 0) AS access_count, u.last_accessed_at FROM memvault.block b LEFT JOIN memvault.block_usage u ON u.vault_id = b.vault_id AND u.block_id = b.id WHERE b.vault_id = %s AND b.id = %s;

-- block_versions --
-- app/write/memories.py
SELECT * FROM memvault.block_versions_v1(%s, %s) WHERE version < %s;

-- block_sources --
-- app/write/memories.py
SELECT turn_id, session_id, source_kind, said_at, decision FROM memvault.block_source WHERE vault_id = %s AND block_id = %s ORDER BY said_at, recorded_at;

-- retract_block --
-- app/write/memories.py
SELECT memvault.retract_block_v1(%s, %s) AS id;

-- block_feedback --
-- app/write/memories.py
SELECT * FROM memvault.block_feedback_v1(%s, %s, %s, %s, %s);

-- purge_block --
-- app/write/memories.py
SELECT memvault.purge_block_v1(%s, %s) AS purged;

-- export_rows --
-- app/portability/exporter.py
SELECT kind, data FROM memvault.export_rows_v1(%s, %s);

-- vault_name_taken --
-- app/portability/importer.py
SELECT 1 FROM memvault.vault_by_name_v1(%s);

-- import_stage_table --
-- app/portability/importer.py
CREATE TEMP TABLE memvault_import (kind text NOT NULL, ord bigint NOT NULL, j jsonb NOT NULL, embedding vector) ON COMMIT DROP;

-- import_drop_vectors --
-- app/portability/importer.py
UPDATE pg_temp.memvault_import SET j = j - 'embedding' WHERE j ? 'embedding';

-- create_vault_id --
-- app/portability/importer.py
SELECT id FROM memvault.create_vault_v1(%s);

-- scope_to_vault --
-- app/portability/importer.py: the rest of a transaction acts for the vault it has just created (row-level security)
SELECT set_config('memvault.vault_id', %s, true) AS vault_id;

-- import_staged --
-- app/portability/importer.py
SELECT memvault.import_staged_v1(%s) AS counts;

-- import_copy --
-- app/portability/importer.py
COPY pg_temp.memvault_import (kind, ord, j) FROM STDIN;

-- import_texts_due --
-- app/portability/importer.py: the staged blocks and entities that came without a vector, with what their text
-- is made of (an entity's name; a block's app.write.items.embedding_text)
SELECT ord, kind, j->>'name' AS name, j->'metadata'->>'context' AS context, j->>'normalized' AS normalized
FROM pg_temp.memvault_import WHERE kind IN ('block', 'entity') AND NOT j ? 'embedding' ORDER BY ord;

-- import_set_vectors --
-- app/portability/importer.py
UPDATE pg_temp.memvault_import m SET embedding = v.e FROM unnest(%s::bigint[], %s::vector[]) AS v(o, e) WHERE m.ord = v.o;

-- entity_two_hops --
-- app/interfaces/inspector.py
SELECT * FROM memvault.entity_neighbourhood_v1(%s, 2);

-- block_entities --
-- app/interfaces/inspector.py
SELECT * FROM memvault.block_entities_v1(%s);

-- entity_one_hop --
-- app/interfaces/inspector.py
SELECT * FROM memvault.entity_neighbourhood_v1(%s, 1);

-- discovery_list --
-- app/interfaces/inspector_review.py
SELECT d FROM memvault.discovery_list_v1() d;

-- discovery_dismiss --
-- app/interfaces/inspector_review.py
SELECT memvault.discovery_dismiss_v1(%s) AS d;

-- dream_runs --
-- app/background/api.py (GET .../dream/runs), app/background/dream.py (the finished run): newest first, ids below %s
SELECT r FROM memvault.dream_runs_v1(%s, %s) r;

-- dream_schedule --
-- app/background/api.py
SELECT memvault.dream_timezone_v1(settings) AS timezone, memvault.dream_hour_v1(settings) AS hour
FROM memvault.vault WHERE id = %s;

-- set_dream_schedule --
-- app/background/api.py
SELECT * FROM memvault.set_dream_schedule_v1(%s, %s, %s);

-- dream_conflicts --
-- app/background/api.py
SELECT c FROM memvault.dream_conflicts_v1(%s, %s) c;

-- discovery_page --
-- app/background/api.py: by kind, dismissed or not, at most %s
SELECT d FROM memvault.discovery_list_v1(%s, %s, %s) d;

-- lint_findings --
-- app/background/api.py
SELECT f FROM memvault.lint_findings_v1(%s, %s, %s) f;

-- compute_edge_weights --
-- app/background/communities.py: the five weights, threshold, default affinity, hub degree cap (EdgeConfig)
SELECT * FROM memvault.compute_edge_weights_v1(%s, %s, %s, %s, %s, %s, %s, %s);

-- community_edges --
-- app/background/communities.py
SELECT * FROM memvault.community_edges_v1();

-- replace_communities --
-- app/background/communities.py
SELECT count(*) FROM memvault.replace_communities_v1(%s, %s::jsonb);

-- communities_at --
-- app/background/communities.py
SELECT id, label, size FROM memvault.communities_v1(%s, %s);

-- community_texts --
-- app/background/communities.py
SELECT content FROM memvault.community_texts_v1(%s, %s);

-- set_community_summary --
-- app/background/communities.py
SELECT memvault.set_community_summary_v1(%s, %s, %s, %s);

-- cross_community_edges --
-- app/background/discovery.py
SELECT * FROM memvault.cross_community_edges_v1(%s, %s, %s);

-- expected_neighbour_gaps --
-- app/background/discovery.py
SELECT * FROM memvault.expected_neighbour_gaps_v1(%s);

-- discovery_add --
-- app/background/discovery.py, app/background/dream.py
SELECT memvault.discovery_add_v1(%s, %s::jsonb) AS n;

-- entity_names --
-- app/background/discovery.py, app/background/profile.py
SELECT * FROM memvault.entity_names_v1(%s);

-- dream_try_lock --
-- app/background/dream.py: one dream per vault at a time (a session advisory lock)
SELECT pg_try_advisory_lock(hashtext('memvault.dream'), hashtext(%s)) AS ok;

-- dream_unlock --
-- app/background/dream.py
SELECT pg_advisory_unlock(hashtext('memvault.dream'), hashtext(%s));

-- set_actor --
-- app/background/dream.py: the actor of the transaction's audit rows
SELECT set_config('memvault.actor', %s, true);

-- dream_gate --
-- app/background/dream.py: the clock is the database's unless the caller gives one (a simulated night)
SELECT * FROM memvault.dream_gate_v1(%s, coalesce(%s::timestamptz, now()), %s, %s);

-- dream_begin --
-- app/background/dream.py
SELECT * FROM memvault.dream_begin_v1(%s, %s);

-- dream_stage_done --
-- app/background/dream.py
SELECT memvault.dream_stage_done_v1(%s, %s, %s::jsonb);

-- dream_finish --
-- app/background/dream.py
SELECT memvault.dream_finish_v1(%s, %s, %s::jsonb, %s, %s::jsonb);

-- dream_counts --
-- app/background/dream.py
SELECT * FROM memvault.dream_counts_v1();

-- dream_snapshot --
-- app/background/dream.py
SELECT * FROM memvault.dream_snapshot_v1(%s, %s, %s);

-- prune_orphan_entities --
-- app/background/dream.py
SELECT memvault.prune_orphan_entities_v1(%s, %s) AS ids;

-- review_sweep --
-- app/background/dream.py, app/background/dream_job.py: overdue items at a time (NULL: now) back to PENDING (due
-- within %s days)
SELECT memvault.review_sweep_v1(coalesce(%s::timestamptz, now()), make_interval(days => %s)) AS n;

-- review_open_count --
-- app/background/dream.py
SELECT memvault.review_open_count_v1() AS n;

-- dream_due --
-- app/background/dream_job.py
SELECT * FROM memvault.dream_due_v1(now(), %s, %s);

-- lint_scan --
-- app/background/lint.py
SELECT * FROM memvault.lint_scan_v1(%s);

-- lint_snapshot --
-- app/background/lint.py
SELECT * FROM memvault.lint_snapshot_v1(%s, %s, %s);

-- lint_add --
-- app/background/lint.py
SELECT memvault.lint_add_v1(%s, %s::jsonb) AS n;

-- review_thresholds --
-- app/background/lint.py, app/background/tcr.py, app/background/review.py: kind, default min confidence, max impact
SELECT * FROM memvault.review_thresholds_v1(%s, %s, %s);

-- lint_fixable --
-- app/background/lint.py
SELECT * FROM memvault.lint_fixable_v1();

-- lint_commit --
-- app/background/lint.py
SELECT memvault.lint_commit_v1(%s, true) AS s;

-- lint_mark --
-- app/background/lint.py
SELECT memvault.lint_mark_v1(%s);

-- review_enqueue --
-- app/background/lint.py, app/background/tcr.py: kind, ref, proposal, confidence, impact, reason, due in %s days
SELECT memvault.review_enqueue_v1(%s, %s, %s::jsonb, %s, %s, %s, NULL, make_interval(days => %s));

-- attitude_upsert --
-- app/background/personal.py
SELECT memvault.attitude_upsert_v1(%s, %s, %s, %s, %s, coalesce(%s, now())) AS a;

-- attitudes --
-- app/background/personal.py
SELECT a FROM memvault.attitudes_v1(coalesce(%s, now()), %s, %s, %s) a;

-- record_skill_use --
-- app/background/personal.py
SELECT memvault.record_skill_use_v1(%s, %s, %s, coalesce(%s, now()), %s, %s, %s) AS s;

-- skills --
-- app/background/personal.py
SELECT s FROM memvault.skills_v1(coalesce(%s, now()), %s, %s, %s) s;

-- dream_preferences_since --
-- app/background/personal.py
SELECT * FROM memvault.dream_preferences_since_v1(%s);

-- dream_skill_uses_since --
-- app/background/personal.py
SELECT * FROM memvault.dream_skill_uses_since_v1(%s, %s);

-- write_daily_snapshot --
-- app/background/profile.py
SELECT memvault.write_daily_snapshot_v1(%s, %s::jsonb, %s) AS s;

-- interest_profile --
-- app/background/profile.py
SELECT * FROM memvault.interest_profile_v1();

-- daily_snapshots --
-- app/background/profile.py
SELECT s FROM memvault.daily_snapshots_v1(%s) s;

-- structural_gaps --
-- app/background/profile.py
SELECT * FROM memvault.structural_gaps_v1(%s);

-- failure_gaps --
-- app/background/profile.py
SELECT * FROM memvault.failure_gaps_v1(%s);

-- review_list --
-- app/background/review.py
SELECT q FROM memvault.review_list_v1(%s, %s, %s, %s) q;

-- review_claim --
-- app/background/review.py: the claim lapses after %s seconds
SELECT memvault.review_claim_v1(%s, %s, make_interval(secs => %s)) AS q;

-- review_decide --
-- app/background/review.py
SELECT memvault.review_decide_v1(%s, %s, %s, %s) AS q;

-- dream_conflicts_to_judge --
-- app/background/tcr.py
SELECT * FROM memvault.dream_conflicts_to_judge_v1(%s);

-- apply_conflict_verdict --
-- app/background/tcr.py
SELECT memvault.apply_conflict_verdict_v1(%s, %s, %s, %s, %s, %s) AS s;

-- tier_plan --
-- app/background/tiering.py
SELECT * FROM memvault.tier_plan_v1(coalesce(%s::timestamptz, now()), %s, %s, %s, %s, %s);

-- apply_tiers --
-- app/background/tiering.py
SELECT memvault.apply_tiers_v1(%s::jsonb);

-- prune_rejected --
-- app/background/tiering.py
SELECT memvault.prune_rejected_v1(coalesce(%s::timestamptz, now()), %s, %s) AS ids;

-- dream_conflict_scan --
-- app/background/dream.py: candidate pairs into dream_conflict (DreamConfig's scan_* fields)
SELECT memvault.dream_conflict_scan_v3(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) AS scan;

-- normalize_predicates --
-- app/background/normalize.py: at most %s triples
SELECT memvault.normalize_predicates_v1(%s) AS r;

-- entities_to_normalize --
-- app/background/normalize.py: created since %s, at most %s
SELECT * FROM memvault.entities_to_normalize_v1(%s, %s);

-- entities_by_keys --
-- app/background/normalize.py
SELECT * FROM memvault.entities_by_keys_v1(%s);

-- normalize_entities --
-- app/background/normalize.py: merges, then renames
SELECT memvault.normalize_entities_v1(%s::jsonb, %s::jsonb) AS r;

-- scrub_statements --
-- app/db/scrub.py: the VACUUM FULL statements of a physical erasure, to run one by one (autocommit)
SELECT statement FROM memvault.scrub_statements_v1(%(catalog)s);

-- scrub_privileges --
-- app/db/scrub.py: what the login may do of a physical erasure (rewrite the catalog, checkpoint, switch WAL)
SELECT r.rolsuper AS superuser,
       r.rolsuper OR pg_has_role('pg_checkpoint', 'MEMBER') AS checkpoint,
       has_function_privilege('pg_switch_wal()', 'EXECUTE') AS switch_wal
  FROM pg_roles r WHERE r.rolname = current_user;

-- scrub_wal_recycle_off --
-- app/db/scrub.py: WAL segments a checkpoint frees are removed, not renamed for reuse with their bytes in them
ALTER SYSTEM SET wal_recycle = off;

-- scrub_wal_recycle_reset --
-- app/db/scrub.py
ALTER SYSTEM RESET wal_recycle;

-- reload_conf --
-- app/db/scrub.py
SELECT pg_reload_conf();

-- checkpoint --
-- app/db/scrub.py
CHECKPOINT;

-- switch_wal --
-- app/db/scrub.py: the segment being written is closed; the next write starts a new one
SELECT pg_switch_wal() AS lsn;

-- wal_segments --
-- app/db/scrub.py: the WAL segment being written, and the segment files after it (made ahead of time from old
-- segments: their bytes are old WAL until overwritten)
SELECT pg_walfile_name(pg_current_wal_insert_lsn()) AS current,
       (SELECT count(*) FROM pg_ls_waldir() w
         WHERE w.name ~ '^[0-9A-F]{24}$' AND w.name > pg_walfile_name(pg_current_wal_insert_lsn())) AS ahead,
       (SELECT count(*) FROM pg_ls_waldir() w WHERE w.name ~ '^[0-9A-F]{24}$') AS files;

-- wal_position --
-- app/db/replicas.py: the primary's WAL position after a write committed (the X-Memvault-LSN response header)
SELECT pg_current_wal_insert_lsn()::text AS lsn;

-- standby_position --
-- app/db/replicas.py: a standby's health check: still a standby, how far it has replayed, when it last did
SELECT pg_is_in_recovery() AS in_recovery, pg_last_wal_replay_lsn()::text AS replay_lsn,
       extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8 AS replay_age_s;

-- maintain_log_partitions --
-- app/background/log_partitions.py: the logs' partitions made ahead and dropped past retention, as of a time
SELECT * FROM memvault.maintain_log_partitions_v1(coalesce(%(now)s::timestamptz, now()), %(months_ahead)s,
                                                  %(keep)s::jsonb);

-- db_stats --
-- app/db/stats.py (`memvault db stats`): size, dead rows, vacuum and estimated bloat per table and index
SELECT * FROM memvault.db_stats_v1() ORDER BY kind DESC, bytes DESC, name;

-- upkeep_summary --
-- app/api/health.py: vacuum and log partitions in a line
SELECT * FROM memvault.upkeep_summary_v1();

-- provenance_sources --
-- app/read/provenance.py
SELECT * FROM memvault.provenance_sources_v1(%s::bigint[], %s, %s, %s, %s, %s, %s);
