-- For ad-hoc work in psql (README): what a vault held as true on a date, by the vault's name. The views beside
-- it (memvault.memories, entity_graph, memory_health) are in sql/incremental/018-psql-views.sql.

-- Facts as of a date: the memories true at p_at as the vault believed them at p_known_at (default: now, i.e.
-- with every later correction), then the graph's relations true at p_at and recorded by p_known_at. Row-level
-- security applies (SECURITY INVOKER, the default): the owner sees any vault, memvault_app only its own.
CREATE OR REPLACE FUNCTION memvault.facts_as_of_v1(p_vault text, p_at timestamptz,
                                                   p_known_at timestamptz DEFAULT now())
    RETURNS TABLE (kind text, id bigint, fact text, category text, valid_at timestamptz, invalid_at timestamptz,
                   recorded_at timestamptz)
    LANGUAGE sql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
    WITH v AS (SELECT id FROM memvault.vault WHERE name = p_vault)
    SELECT 'memory'::text, b.id, b.content, b.category, b.valid_at, b.invalid_at, b.recorded_at
    FROM v, memvault.blocks_believed_v1(v.id, p_at, p_known_at) b
    UNION ALL
    SELECT 'relation'::text, g.triple_id, g.subject || ' ' || g.predicate || ' ' || g.object, NULL, g.valid_at,
           g.invalid_at, g.recorded_at
    FROM v JOIN memvault.entity_graph g ON g.vault_id = v.id
    WHERE g.valid_at <= p_at AND (g.invalid_at IS NULL OR g.invalid_at > p_at) AND g.recorded_at <= p_known_at
    ORDER BY 1, 2
$$;
