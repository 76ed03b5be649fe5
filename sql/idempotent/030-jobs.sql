-- Deferring Procrastinate jobs from inside a memvault transaction, so a memory write and its follow-up
-- job commit or roll back together. A job whose queueing lock is already queued is not queued twice. SECURITY DEFINER: the vault-scoped role may queue jobs, nothing more.

CREATE OR REPLACE FUNCTION memvault.defer_job_v1(
    p_task_name     text,
    p_args          jsonb,
    p_queue         text DEFAULT 'default',
    p_queueing_lock text DEFAULT NULL,
    p_lock          text DEFAULT NULL,
    p_scheduled_at  timestamptz DEFAULT NULL
)
    RETURNS bigint
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = public, pg_catalog
    AS $$
DECLARE
    v_ids bigint[];
BEGIN
    v_ids := public.procrastinate_defer_jobs_v1(ARRAY[
        ROW(p_queue, p_task_name, 0, p_lock, p_queueing_lock, p_args, p_scheduled_at)
    ]::public.procrastinate_job_to_defer_v1[]);
    RETURN v_ids[1];
EXCEPTION WHEN unique_violation THEN
    -- The same queueing lock is already waiting: that job will do the work; the caller's write goes on.
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION memvault.defer_job_v1(text, jsonb, text, text, text, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memvault.defer_job_v1(text, jsonb, text, text, text, timestamptz) TO memvault_app;
