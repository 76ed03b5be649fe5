-- 017-access: API keys that the service checks, an audit_log that records who changed what (before and after)
-- and that the service's role can only append to, and row-level security on the vault table itself.
-- Run-once DDL; the functions are in sql/idempotent/005-access.sql.

-- API keys (app/auth.py). A key reads mvk_<id>_<secret>: the id is public (it names the key in lists, audit rows
-- and revocation), the secret is only ever stored as an argon2id hash. The table existed unused since 001; it is
-- reshaped here (no row could have been written to it).
ALTER TABLE memvault.api_key DROP COLUMN id;
ALTER TABLE memvault.api_key RENAME COLUMN prefix TO id;
ALTER TABLE memvault.api_key RENAME CONSTRAINT api_key_prefix_key TO api_key_pkey_tmp;
ALTER TABLE memvault.api_key DROP CONSTRAINT api_key_pkey_tmp;
ALTER TABLE memvault.api_key ADD PRIMARY KEY (id);
ALTER TABLE memvault.api_key ADD CONSTRAINT api_key_id_check CHECK (id ~ '^[a-z0-9]{6,32}$');
ALTER TABLE memvault.api_key ALTER COLUMN key_hash TYPE text USING convert_from(key_hash, 'UTF8');
ALTER TABLE memvault.api_key DROP COLUMN scopes;
ALTER TABLE memvault.api_key ADD COLUMN scope text NOT NULL CHECK (scope IN ('read', 'write', 'admin'));
ALTER TABLE memvault.api_key ADD COLUMN name text NOT NULL DEFAULT '' CHECK (length(name) <= 200);
ALTER TABLE memvault.api_key ADD COLUMN created_by text NOT NULL DEFAULT '';
ALTER TABLE memvault.api_key ADD COLUMN last_used_at timestamptz;
-- memvault_app (the role of vault transactions) never sees key hashes: only the owner connection reads this table.
REVOKE ALL ON memvault.api_key FROM memvault_app;

-- Audit: what a mutation changed. actor is the key id (key:<id>), a job (worker:<job>) or a CLI user (cli:<user>),
-- taken from the transaction's memvault.actor setting by memvault.audit_actor().
ALTER TABLE memvault.audit_log ADD COLUMN before jsonb;
ALTER TABLE memvault.audit_log ADD COLUMN after jsonb;

-- Append-only for the service's role: no UPDATE, DELETE or TRUNCATE granted; the triggers (below) refuse them for
-- everyone else.
REVOKE UPDATE, DELETE, TRUNCATE ON memvault.audit_log FROM memvault_app;

-- The vault table: a vault transaction sees its own vault's row only (names of other vaults are data too).
ALTER TABLE memvault.vault ENABLE ROW LEVEL SECURITY;
ALTER TABLE memvault.vault FORCE ROW LEVEL SECURITY;
CREATE POLICY vault_isolation ON memvault.vault TO memvault_app
    USING (id = memvault.current_vault_id()) WITH CHECK (id = memvault.current_vault_id());

-- audit_log stays append-only; the one exception is erasure (sec-ops' purge, a SECURITY DEFINER function run by
-- the owner): in a transaction whose memvault.purge_vault setting names a vault, the content columns (before,
-- after, detail) of that vault's audit rows may be redacted. Who, what, when and which vault never change, and no
-- row is ever deleted.
CREATE OR REPLACE FUNCTION memvault._audit_log_append_only() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.vault_id IS NOT NULL
       AND current_setting('memvault.purge_vault', true) = OLD.vault_id::text
       AND (NEW.vault_id, NEW.id, NEW.at, NEW.actor, NEW.action, NEW.block_id, NEW.rule, NEW.ruleset_version)
           IS NOT DISTINCT FROM
           (OLD.vault_id, OLD.id, OLD.at, OLD.actor, OLD.action, OLD.block_id, OLD.rule, OLD.ruleset_version) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'memvault.audit_log is append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'audit entries are never changed or removed; erasure of a purged vault redacts their content';
END
$$;
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON memvault.audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION memvault._audit_log_append_only();

-- What an audit row keeps of a block (no vectors, no derived text).
CREATE FUNCTION memvault._block_audit_json(b memvault.block) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT jsonb_build_object('kind', b.kind, 'category', b.category, 'content', b.content,
                              'session_id', b.session_id, 'source_kind', b.source_kind, 'trust_score', b.trust_score,
                              'confidence', b.confidence, 'tier', b.tier, 'valid_at', b.valid_at,
                              'invalid_at', b.invalid_at, 'superseded_by', b.superseded_by,
                              'retracted_at', b.retracted_at, 'version', b.version, 'quarantine_tags', b.quarantine_tags)
$$;

-- Every mutation of the system of record leaves an audit row in its own transaction, whoever makes it (REST, MCP,
-- hooks, worker, CLI): these triggers, not the callers, write them, so a new code path cannot forget to.
CREATE FUNCTION memvault._audit_block_insert() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    INSERT INTO memvault.audit_log (vault_id, actor, action, block_id, after)
    SELECT n.vault_id, memvault.audit_actor(), 'block.insert', n.id, memvault._block_audit_json(n) FROM new_rows n;
    RETURN NULL;
END
$$;
CREATE TRIGGER block_audit_insert AFTER INSERT ON memvault.block
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memvault._audit_block_insert();

CREATE FUNCTION memvault._audit_block_update() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    INSERT INTO memvault.audit_log (vault_id, actor, action, block_id, before, after)
    VALUES (NEW.vault_id, memvault.audit_actor(),
            CASE WHEN OLD.retracted_at IS NULL AND NEW.retracted_at IS NOT NULL THEN 'block.retract'
                 WHEN NEW.superseded_by IS DISTINCT FROM OLD.superseded_by THEN 'block.supersede'
                 ELSE 'block.update' END,
            NEW.id, memvault._block_audit_json(OLD), memvault._block_audit_json(NEW));
    RETURN NULL;
END
$$;
-- Only what the vault says changes (the columns block_history keeps); usage counters and scores are not audited.
CREATE TRIGGER block_audit_update AFTER UPDATE ON memvault.block FOR EACH ROW
    WHEN ((OLD.content, OLD.category, OLD.valid_at, OLD.invalid_at, OLD.superseded_by, OLD.retracted_at,
           OLD.trust_score, OLD.confidence, OLD.tier, OLD.quarantine_tags)
          IS DISTINCT FROM
          (NEW.content, NEW.category, NEW.valid_at, NEW.invalid_at, NEW.superseded_by, NEW.retracted_at,
           NEW.trust_score, NEW.confidence, NEW.tier, NEW.quarantine_tags))
    EXECUTE FUNCTION memvault._audit_block_update();

-- Deleted blocks: one row per vault and statement, with their ids only (deleting is how content goes away).
CREATE FUNCTION memvault._audit_block_delete() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    INSERT INTO memvault.audit_log (vault_id, actor, action, before)
    SELECT o.vault_id, memvault.audit_actor(), 'block.delete',
           jsonb_build_object('count', count(*), 'ids', jsonb_agg(o.id ORDER BY o.id))
      FROM old_rows o GROUP BY o.vault_id;
    RETURN NULL;
END
$$;
CREATE TRIGGER block_audit_delete AFTER DELETE ON memvault.block
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION memvault._audit_block_delete();

-- Appended turns: one row per vault, session and statement (the turns themselves are the archive).
CREATE FUNCTION memvault._audit_turn_insert() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    INSERT INTO memvault.audit_log (vault_id, actor, action, after)
    SELECT n.vault_id, memvault.audit_actor(), 'session.append_turns',
           jsonb_build_object('session_id', n.session_id, 'count', count(*), 'turn_ids', jsonb_agg(n.id ORDER BY n.id),
                              'first_seq', min(n.seq), 'last_seq', max(n.seq))
      FROM new_rows n GROUP BY n.vault_id, n.session_id;
    RETURN NULL;
END
$$;
CREATE TRIGGER turn_audit_insert AFTER INSERT ON memvault.turn
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memvault._audit_turn_insert();

-- A session closed (or reopened): its state before and after.
CREATE FUNCTION memvault._audit_session_update() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    INSERT INTO memvault.audit_log (vault_id, actor, action, before, after)
    VALUES (NEW.vault_id, memvault.audit_actor(),
            CASE WHEN NEW.closed_at IS NOT NULL AND OLD.closed_at IS NULL THEN 'session.close'
                 WHEN NEW.closed_at IS NULL AND OLD.closed_at IS NOT NULL THEN 'session.reopen'
                 ELSE 'session.update' END,
            jsonb_build_object('session_id', OLD.id, 'closed_at', OLD.closed_at, 'summary', OLD.summary,
                               'turn_count', OLD.turn_count),
            jsonb_build_object('session_id', NEW.id, 'closed_at', NEW.closed_at, 'summary', NEW.summary,
                               'turn_count', NEW.turn_count));
    RETURN NULL;
END
$$;
CREATE TRIGGER session_audit_update AFTER UPDATE ON memvault.session FOR EACH ROW
    WHEN ((OLD.closed_at, OLD.summary) IS DISTINCT FROM (NEW.closed_at, NEW.summary))
    EXECUTE FUNCTION memvault._audit_session_update();

-- Vaults and API keys: small rows, kept whole (a key's hash never goes into the log).
CREATE FUNCTION memvault._audit_admin_row() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    v_old  jsonb := CASE WHEN TG_OP <> 'INSERT' THEN to_jsonb(OLD) - 'key_hash' END;
    v_new  jsonb := CASE WHEN TG_OP <> 'DELETE' THEN to_jsonb(NEW) - 'key_hash' END;
    v_row  jsonb := coalesce(v_new, v_old);
    v_what text := CASE TG_TABLE_NAME WHEN 'vault' THEN 'vault' ELSE 'key' END;
BEGIN
    INSERT INTO memvault.audit_log (vault_id, actor, action, before, after)
    VALUES (CASE v_what WHEN 'vault' THEN (v_row ->> 'id')::uuid ELSE (v_row ->> 'vault_id')::uuid END,
            memvault.audit_actor(),
            v_what || '.' || CASE TG_OP WHEN 'INSERT' THEN 'create' WHEN 'DELETE' THEN 'drop'
                                        ELSE CASE WHEN v_what = 'key' AND (v_old ->> 'revoked_at') IS NULL
                                                       AND (v_new ->> 'revoked_at') IS NOT NULL THEN 'revoke'
                                                  ELSE 'update' END END,
            v_old, v_new);
    RETURN NULL;
END
$$;
CREATE TRIGGER vault_audit AFTER INSERT OR UPDATE OR DELETE ON memvault.vault
    FOR EACH ROW EXECUTE FUNCTION memvault._audit_admin_row();
CREATE TRIGGER api_key_audit_insert_delete AFTER INSERT OR DELETE ON memvault.api_key
    FOR EACH ROW EXECUTE FUNCTION memvault._audit_admin_row();
-- last_used_at is bookkeeping, not a change of the key.
CREATE TRIGGER api_key_audit_update AFTER UPDATE ON memvault.api_key FOR EACH ROW
    WHEN ((OLD.revoked_at, OLD.scope, OLD.vault_id, OLD.name) IS DISTINCT FROM
          (NEW.revoked_at, NEW.scope, NEW.vault_id, NEW.name))
    EXECUTE FUNCTION memvault._audit_admin_row();
