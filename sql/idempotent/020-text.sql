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
-- cjk_bigrams (a sub-select: never inlined, so each statement that calls it plans its body again, ~0.15 ms of a
-- recall) only for a text with a CJK character in it; for any other its bigrams are '' (no run matched), so the
-- same tsvector. Not STRICT (a CASE is not strict, and a STRICT function is inlined only when its body is): a NULL
-- text still gives NULL (to_tsvector and || are strict).
CREATE OR REPLACE FUNCTION memvault.sparse_document_v1(p_text text)
    RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN to_tsvector('pg_catalog.english'::regconfig,
                       regexp_replace(p_text, '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+', ' ', 'g'))
        || to_tsvector('pg_catalog.simple'::regconfig,
                       CASE WHEN p_text ~ '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]'
                            THEN memvault.cjk_bigrams(p_text) ELSE '' END);

-- The query side: every lexeme of the query, OR-ed (AND alone misses paraphrased questions).
CREATE OR REPLACE FUNCTION memvault.sparse_query_v1(p_text text)
    RETURNS tsquery
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN (
        SELECT coalesce(to_tsquery('pg_catalog.simple'::regconfig, string_agg(quote_literal(l), ' | ')), ''::tsquery)
        FROM unnest(tsvector_to_array(memvault.sparse_document_v1(p_text))) AS l
    );

-- Chinese stop words of the sparse rail's query side (sparse_plan_v2), as lexemes of sparse_document_v1: CJK
-- text is indexed as character bigrams, so a function word is a bigram ("什么", "我们"), a lone character ("我"),
-- or any bigram with a particle in it ("我的", "的猫", "好吗"). English stop words are dropped by the english
-- text search configuration itself (Snowball's list), so only CJK lexemes can match here. Traditional and
-- simplified forms both.
CREATE OR REPLACE FUNCTION memvault.zh_stop_v1(p_lexeme text)
    RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN p_lexeme ~ '[的吗呢吧啊呀嗎嘛哦]'
        OR p_lexeme = ANY (ARRAY['什么', '什麼', '怎么', '怎麼', '怎样', '怎樣', '为什', '為什', '我们', '我們', '你们',
                                 '你們', '他们', '他們', '她们', '她們', '这个', '這個', '那个', '那個', '哪个', '哪個',
                                 '这些', '這些', '那些', '这样', '這樣', '那样', '那樣', '因为', '因為', '所以', '但是',
                                 '如果', '还是', '還是', '或者', '就是', '可以', '已经', '已經', '一个', '一個', '没有',
                                 '沒有', '自己', '不是', '是不', '有没', '有沒', '是什', '我', '你', '他', '她', '它',
                                 '是', '在', '和', '与', '與', '也', '都', '就', '还', '還', '有', '个', '個', '这', '這',
                                 '那', '哪', '谁', '誰', '了', '么', '麼']);
