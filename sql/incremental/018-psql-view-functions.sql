-- 018-psql-view-functions: the two scoring functions the memory_health view of 018-psql-views.sql reads, frozen as
-- they stood when that view landed. Revision 0018 used to apply the whole idempotent layer before its view, and
-- that layer grants to memvault_service, a role only revision 0023 creates: on a cluster that had never seen the
-- project, `memvault migrate` failed there. A run-once file holds what the view needs and nothing else; at head the
-- idempotent 070-scoring.sql replaces both (same signatures) with the current bodies.
CREATE OR REPLACE FUNCTION memvault.weibull_half_life_v1(
    p_confidence double precision, p_access_count integer,
    p_core double precision DEFAULT 180, p_hot double precision DEFAULT 60,
    p_warm double precision DEFAULT 30, p_cold double precision DEFAULT 14,
    p_conf_core double precision DEFAULT 0.9, p_conf_hot double precision DEFAULT 0.7,
    p_conf_warm double precision DEFAULT 0.4, p_max_stretch double precision DEFAULT 10)
    RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN (CASE WHEN p_confidence >= p_conf_core THEN p_core
                 WHEN p_confidence >= p_conf_hot THEN p_hot
                 WHEN p_confidence >= p_conf_warm THEN p_warm
                 ELSE p_cold END)
           * least(p_max_stretch, 1 + ln(1 + greatest(p_access_count, 0)) / ln(2.0::double precision));

CREATE OR REPLACE FUNCTION memvault.weibull_decay_v1(p_age_days double precision, p_half_life double precision,
                                                     p_shape double precision DEFAULT 1.5,
                                                     p_w double precision DEFAULT 0.3)
    RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN 1 - p_w * (1 - exp(-least(power(greatest(p_age_days, 0) / (p_half_life / power(ln(2.0), 1 / p_shape)),
                                             p_shape), 700)));
