-- API keys and the audit actor (app/auth.py). Re-applied by every migration, some before 017-access.sql reshaped
-- memvault.api_key: the functions that read it are plpgsql (bodies checked when called, not when created).
-- Only the owner connection calls the key functions: memvault_app has no privilege on memvault.api_key.

-- Who is acting: the transaction's memvault.actor (app/db/connector.py sets it from the request's key, the job or
-- the CLI user), else p_default (a job's own name, the caller's p_actor) ...
CREATE OR REPLACE FUNCTION memvault.audit_actor(p_default text) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT coalesce(nullif(current_setting('memvault.actor', true), ''), p_default) $$;

-- ... or, with none given, the database role (someone at a psql prompt).
CREATE OR REPLACE FUNCTION memvault.audit_actor() RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT memvault.audit_actor('db:' || session_user) $$;

CREATE OR REPLACE FUNCTION memvault.api_key_create_v1(p_id text, p_hash text, p_scope text, p_vault uuid,
                                                      p_name text)
    RETURNS TABLE (id text, scope text, vault_id uuid, vault_name text, name text, created_at timestamptz,
                   created_by text, last_used_at timestamptz, revoked_at timestamptz)
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    INSERT INTO memvault.api_key AS k (id, key_hash, scope, vault_id, name, created_by)
    VALUES (p_id, p_hash, p_scope, p_vault, coalesce(p_name, ''), memvault.audit_actor());
    RETURN QUERY SELECT * FROM memvault.api_key_list_v1(NULL, true) l WHERE l.id = p_id;
END
$$;

-- One key by its public id, with what the guard needs to decide (the hash is checked in Python, argon2).
CREATE OR REPLACE FUNCTION memvault.api_key_lookup_v1(p_id text)
    RETURNS TABLE (id text, key_hash text, scope text, vault_id uuid, vault_name text, revoked_at timestamptz,
                   last_used_at timestamptz)
    LANGUAGE plpgsql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    RETURN QUERY
    SELECT k.id, k.key_hash, k.scope, k.vault_id, v.name, k.revoked_at, k.last_used_at
      FROM memvault.api_key k LEFT JOIN memvault.vault v ON v.id = k.vault_id
     WHERE k.id = p_id;
END
$$;

-- Keys, newest first: those bound to p_vault (and, with p_all, every key). Never the hashes.
CREATE OR REPLACE FUNCTION memvault.api_key_list_v1(p_vault uuid, p_all boolean DEFAULT false)
    RETURNS TABLE (id text, scope text, vault_id uuid, vault_name text, name text, created_at timestamptz,
                   created_by text, last_used_at timestamptz, revoked_at timestamptz)
    LANGUAGE plpgsql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    RETURN QUERY
    SELECT k.id, k.scope, k.vault_id, v.name, k.name, k.created_at, k.created_by, k.last_used_at, k.revoked_at
      FROM memvault.api_key k LEFT JOIN memvault.vault v ON v.id = k.vault_id
     WHERE p_all OR k.vault_id = p_vault
     ORDER BY k.created_at DESC, k.id;
END
$$;

-- Revocation takes effect on the next request (every request looks its key up). Revoking twice is a no-op that
-- returns the key as it is.
CREATE OR REPLACE FUNCTION memvault.api_key_revoke_v1(p_id text)
    RETURNS TABLE (id text, scope text, vault_id uuid, vault_name text, name text, created_at timestamptz,
                   created_by text, last_used_at timestamptz, revoked_at timestamptz)
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    UPDATE memvault.api_key k SET revoked_at = clock_timestamp() WHERE k.id = p_id AND k.revoked_at IS NULL;
    RETURN QUERY SELECT * FROM memvault.api_key_list_v1(NULL, true) l WHERE l.id = p_id;
END
$$;

-- Bookkeeping after a successful check, at most once a minute per key (no write on most requests).
CREATE OR REPLACE FUNCTION memvault.api_key_touch_v1(p_id text)
    RETURNS void
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    UPDATE memvault.api_key k SET last_used_at = now()
     WHERE k.id = p_id AND (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute');
END
$$;

CREATE OR REPLACE FUNCTION memvault.api_key_active_count_v1()
    RETURNS bigint
    LANGUAGE plpgsql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    RETURN (SELECT count(*) FROM memvault.api_key WHERE revoked_at IS NULL);
END
$$;

DO $$
BEGIN
    REVOKE ALL ON FUNCTION memvault.api_key_create_v1(text, text, text, uuid, text) FROM PUBLIC;
    REVOKE ALL ON FUNCTION memvault.api_key_lookup_v1(text) FROM PUBLIC;
    REVOKE ALL ON FUNCTION memvault.api_key_list_v1(uuid, boolean) FROM PUBLIC;
    REVOKE ALL ON FUNCTION memvault.api_key_revoke_v1(text) FROM PUBLIC;
    REVOKE ALL ON FUNCTION memvault.api_key_touch_v1(text) FROM PUBLIC;
    REVOKE ALL ON FUNCTION memvault.api_key_active_count_v1() FROM PUBLIC;
END
$$;

-- A vault's scope, entered by the statement itself (the recall's self-scoped statements, recall_fast_v3 and
-- record_recall_v2: one statement in an implicit transaction instead of BEGIN, a set_config statement and COMMIT):
-- exactly what app/db/connector.py's vault transaction sets first (memvault.vault_id for row-level security, the
-- audit's actor, the memvault_app role), local to the transaction. The caller passes the vault the connector was
-- given (the one the request's key was verified for, app/read/unit.py), never a value from the request. Only the
-- service's login role (and the owner) may call the functions that use it: memvault_app may not (revoked below).
CREATE OR REPLACE FUNCTION memvault._enter_vault_v1(p_vault uuid, p_actor text)
    RETURNS void
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    IF p_vault IS NULL THEN
        RAISE EXCEPTION 'a vault-scoped statement needs a vault' USING ERRCODE = 'MV422';
    END IF;
    PERFORM set_config('memvault.vault_id', p_vault::text, true), set_config('memvault.actor', coalesce(p_actor, ''), true),
            set_config('role', 'memvault_app', true);
END
$$;
REVOKE ALL ON FUNCTION memvault._enter_vault_v1(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memvault._enter_vault_v1(uuid, text) TO memvault_service;
