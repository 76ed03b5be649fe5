-- 023-service-role: the role the API and the worker log in as. Until now the service connected as the cluster's
-- superuser and stepped down per transaction (SET LOCAL ROLE memvault_app): a superuser session can RESET ROLE, so
-- row-level security was only as strong as the service's own code. memvault_service is an ordinary LOGIN role:
-- no superuser, no BYPASSRLS, no CREATEDB/CREATEROLE, owner of nothing. It inherits memvault_app (the vault role:
-- the row-level security policies are written TO memvault_app, and apply to its members), so with no
-- memvault.vault_id set it sees no vault's rows at all; what it may do across vaults (look an API key up, create
-- or purge a vault, list the vaults due for a job) is a short list of SECURITY DEFINER functions granted to it by
-- name (sql/idempotent/990-service-role.sql). Migrations, `memvault db` and the CLI keep the owner's login.
-- Roles belong to the cluster: created here when missing; an existing one must have no power beyond these.
DO $$
DECLARE
    v_role pg_roles;
BEGIN
    SELECT * INTO v_role FROM pg_roles WHERE rolname = 'memvault_service';
    IF NOT FOUND THEN
        BEGIN
            CREATE ROLE memvault_service LOGIN INHERIT NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOREPLICATION;
        EXCEPTION WHEN duplicate_object THEN
            NULL;  -- another database of the cluster migrated at the same moment
        END;
    ELSIF v_role.rolsuper OR v_role.rolbypassrls OR v_role.rolcreaterole OR v_role.rolcreatedb
          OR v_role.rolreplication OR NOT v_role.rolcanlogin THEN
        RAISE EXCEPTION 'role memvault_service exists with powers the service must not have'
            USING HINT = 'ALTER ROLE memvault_service LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE '
                         'NOREPLICATION; then migrate again';
    END IF;
END
$$;
GRANT memvault_app TO memvault_service;
DO $$
BEGIN
    EXECUTE format('GRANT CONNECT, TEMPORARY ON DATABASE %I TO memvault_service', current_database());
END
$$;

-- Procrastinate's queue (public schema, migration 0002): the worker fetches, runs and finishes jobs; the API's
-- producers defer them (memvault.defer_job_v1). The worker's stalled-job check reads the workers' heartbeats.
GRANT USAGE ON SCHEMA public TO memvault_service;
DO $$
DECLARE
    v_name text;
BEGIN
    FOR v_name IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                   WHERE n.nspname = 'public' AND c.relname LIKE 'procrastinate%' AND c.relkind IN ('r', 'p')
    LOOP
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON public.%I TO memvault_service', v_name);
    END LOOP;
    FOR v_name IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                   WHERE n.nspname = 'public' AND c.relname LIKE 'procrastinate%' AND c.relkind = 'S'
    LOOP
        EXECUTE format('GRANT USAGE, SELECT, UPDATE ON SEQUENCE public.%I TO memvault_service', v_name);
    END LOOP;
END
$$;
