-- The sparse rail's text functions. Postgres' parsers do not segment CJK, so CJK runs are indexed as
-- overlapping character bigrams (a lone character stays a unigram) beside the English lexemes.

CREATE OR REPLACE FUNCTION memvault.cjk_bigrams(p_text text)
    RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN (
        SELECT coalesce(string_agg(CASE WHEN length(r.run) = 1 THEN r.run ELSE substr(r.run, g.i, 2) END,
                                   ' ' ORDER BY r.ord, g.i), '')
        FROM regexp_matches(p_text, '([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+)', 'g')
                 WITH ORDINALITY AS m(run_arr, ord)
        CROSS JOIN LATERAL (SELECT m.run_arr[1] AS run, m.ord) AS r
        CROSS JOIN LATERAL generate_series(1, greatest(length(r.run) - 1, 1)) AS g(i)
    );

-- The document side of the sparse rail: English lexemes (stemmed, stop words dropped) + CJK bigrams.
CREATE OR REPLACE FUNCTION memvault.sparse_document_v1(p_text text)
    RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN to_tsvector('pg_catalog.english'::regconfig,
                       regexp_replace(p_text, '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+', ' ', 'g'))
        || to_tsvector('pg_catalog.simple'::regconfig, memvault.cjk_bigrams(p_text));

-- The query side: every lexeme of the query, OR-ed (AND alone misses paraphrased questions).
CREATE OR REPLACE FUNCTION memvault.sparse_query_v1(p_text text)
    RETURNS tsquery
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN (
        SELECT coalesce(to_tsquery('pg_catalog.simple'::regconfig, string_agg(quote_literal(l), ' | ')), ''::tsquery)
        FROM unnest(tsvector_to_array(memvault.sparse_document_v1(p_text))) AS l
    );
