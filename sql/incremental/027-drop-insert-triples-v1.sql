-- insert_triples_v1 added every triple it was given: a turn's chunk and the unit the session's close extracts from it
-- state the same fact, so the graph held it twice (entity_graph listed each relation twice). insert_triples_v2 adds
-- a triple only when no current one has the same ends (sql/idempotent/050-graph.sql); v1 is no longer called.
DROP FUNCTION IF EXISTS memvault.insert_triples_v1(uuid, jsonb);
