-- Who made each change and why, and what it replaced (prefsd 0.2).

-- The revision of the entry a change replaced (the value's, for set and reset; the lock's, for
-- unlock), so that a read in the past gives the revision a value had then.
ALTER TABLE change ADD COLUMN old_revision bigint;
-- Who: the user or token (NULL for changes made before this migration), the program that sent it,
-- and the host that committed it.
ALTER TABLE change ADD COLUMN author text;
ALTER TABLE change ADD COLUMN agent text;
ALTER TABLE change ADD COLUMN host text;
-- Why, when the writer said (`Prefs-Reason`, `--reason`).
ALTER TABLE change ADD COLUMN reason text;

-- No index by key or by time: every index costs each write a page in a random place, and history
-- and the audit log read the log from its newest end — a key's history stops once it has its
-- steps, a time is reached in revision order (times rise with revisions, but for hosts' clocks
-- apart) — so the log's own order serves them. (An index by key cost 64 clients' writes a fifth
-- to a third of their rate, measured; history is fast enough without.)

-- prefsd_write as 0001 has it, but for the log entries' new columns, and a compaction that keeps
-- the changes that set what is stored now — the value, lock or schema each entry holds — so that
-- no current state is left unexplained, however old its change.
CREATE OR REPLACE FUNCTION prefsd_write(
    upserted jsonb, deleted jsonb, locked jsonb, unlocked jsonb, registered jsonb, logged jsonb,
    keep_from bigint, newest bigint, start bigint, payload text, shift bigint
) RETURNS void LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    IF upserted <> '[]' THEN
        INSERT INTO preference (key, scope, value, revision)
        SELECT r.key, r.scope, r.value, r.revision + shift
        FROM jsonb_to_recordset(upserted) AS r(key text, scope text, value text, revision bigint)
        ON CONFLICT (key, scope) DO UPDATE SET value = excluded.value, revision = excluded.revision;
    END IF;
    IF deleted <> '[]' THEN
        DELETE FROM preference p USING jsonb_to_recordset(deleted) AS r(key text, scope text)
        WHERE p.key = r.key AND p.scope = r.scope;
    END IF;
    IF locked <> '[]' THEN
        INSERT INTO preference_lock (key, scope, revision)
        SELECT r.key, r.scope, r.revision + shift
        FROM jsonb_to_recordset(locked) AS r(key text, scope text, revision bigint)
        ON CONFLICT (key, scope) DO UPDATE SET revision = excluded.revision;
    END IF;
    IF unlocked <> '[]' THEN
        DELETE FROM preference_lock l USING jsonb_to_recordset(unlocked) AS r(key text, scope text)
        WHERE l.key = r.key AND l.scope = r.scope;
    END IF;
    IF registered <> '[]' THEN
        INSERT INTO preference_schema (key, definition, revision)
        SELECT r.key, r.definition, r.revision + shift
        FROM jsonb_to_recordset(registered) AS r(key text, definition text, revision bigint)
        ON CONFLICT (key) DO UPDATE SET definition = excluded.definition, revision = excluded.revision;
    END IF;
    IF logged <> '[]' THEN
        INSERT INTO change (
            revision, kind, key, scope, value, old_value, old_revision, draft, attachment, account, thread,
            previous_thread, draft_revision, valid, created_at, author, agent, host, reason)
        SELECT r.revision + shift, r.kind, r.key, r.scope, r.value, r.old_value,
            -- A revision this batch made (after its start, `start - shift`) moves with it; one committed
            -- before stays.
            CASE WHEN r.old_revision > start - shift THEN r.old_revision + shift ELSE r.old_revision END,
            r.draft, r.attachment, r.account, r.thread, r.previous_thread, r.draft_revision, r.valid, r.created_at,
            r.author, r.agent, r.host, r.reason
        FROM jsonb_to_recordset(logged) AS r(
            revision bigint, kind text, key text, scope text, value text, old_value text, old_revision bigint,
            draft text, attachment text, account text, thread text, previous_thread text, draft_revision bigint,
            valid boolean, created_at double precision, author text, agent text, host text, reason text);
    END IF;
    IF keep_from > 0 THEN
        DELETE FROM change
        WHERE revision < keep_from
            AND revision NOT IN (SELECT revision FROM preference UNION ALL SELECT revision FROM preference_lock
                UNION ALL SELECT revision FROM preference_schema);
    END IF;
    UPDATE change_log_state
    SET newest_revision = newest, oldest_revision = greatest(oldest_revision, keep_from)
    WHERE id = 1;
    IF newest > start THEN
        PERFORM pg_notify('prefsd_changes', payload);
    END IF;
END;
$$;
