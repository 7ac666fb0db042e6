-- A group commit's statements are planned once per connection, not at every commit.
--
-- prefsd_shift becomes PL/pgSQL, whose statements keep their plans: PostgreSQL parses and plans
-- the body of a SQL-language function it cannot inline anew at every call, four times a commit;
-- a shift of 0 (no other host committed meanwhile) now runs no query at all.
--
-- The functions a writer calls plan their statements generically (plan_cache_mode): each statement
-- runs with new values at every commit, and a plan made for one set of values is as good for the
-- next. The one statement whose best plan depended on its values — the compaction's DELETE in
-- prefsd_commit, which a generic plan would run as a scan of the whole change log while every
-- host waits on the revision counter — now names the range it deletes, so that the log's index
-- serves it.

CREATE OR REPLACE FUNCTION prefsd_shift(rows jsonb, shift bigint) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF shift = 0 THEN
        RETURN rows;
    END IF;
    RETURN (
        SELECT coalesce(jsonb_agg(jsonb_set(r.element, '{revision}', to_jsonb((r.element ->> 'revision')::bigint + shift))), '[]'::jsonb)
        FROM jsonb_array_elements(rows) AS r(element));
END;
$$;

-- prefsd_commit as 0001 made it, but for the compaction's DELETE, which names its range.
CREATE OR REPLACE FUNCTION prefsd_commit(
    upserted jsonb, deleted jsonb, locked jsonb, unlocked jsonb, registered jsonb, logged jsonb,
    keep_from bigint, newest bigint, start bigint, payload text
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO preference (key, scope, value, revision)
    SELECT r.key, r.scope, r.value, r.revision
    FROM jsonb_to_recordset(upserted) AS r(key text, scope text, value text, revision bigint)
    ON CONFLICT (key, scope) DO UPDATE SET value = excluded.value, revision = excluded.revision;
    DELETE FROM preference p USING jsonb_to_recordset(deleted) AS r(key text, scope text)
    WHERE p.key = r.key AND p.scope = r.scope;
    INSERT INTO preference_lock (key, scope, revision)
    SELECT r.key, r.scope, r.revision
    FROM jsonb_to_recordset(locked) AS r(key text, scope text, revision bigint)
    ON CONFLICT (key, scope) DO UPDATE SET revision = excluded.revision;
    DELETE FROM preference_lock l USING jsonb_to_recordset(unlocked) AS r(key text, scope text)
    WHERE l.key = r.key AND l.scope = r.scope;
    INSERT INTO preference_schema (key, definition, revision)
    SELECT r.key, r.definition, r.revision
    FROM jsonb_to_recordset(registered) AS r(key text, definition text, revision bigint)
    ON CONFLICT (key) DO UPDATE SET definition = excluded.definition, revision = excluded.revision;
    INSERT INTO change (
        revision, kind, key, scope, value, old_value, draft, attachment, account, thread, previous_thread,
        draft_revision, valid, created_at)
    SELECT r.revision, r.kind, r.key, r.scope, r.value, r.old_value, r.draft, r.attachment, r.account, r.thread,
        r.previous_thread, r.draft_revision, r.valid, r.created_at
    FROM jsonb_to_recordset(logged) AS r(
        revision bigint, kind text, key text, scope text, value text, old_value text, draft text, attachment text,
        account text, thread text, previous_thread text, draft_revision bigint, valid boolean,
        created_at double precision);
    IF keep_from > 0 THEN
        DELETE FROM change
        WHERE revision >= (SELECT s.oldest_revision FROM change_log_state s WHERE s.id = 1) AND revision < keep_from;
    END IF;
    UPDATE change_log_state
    SET newest_revision = newest, oldest_revision = greatest(oldest_revision, keep_from)
    WHERE id = 1;
    IF newest > start THEN
        PERFORM pg_notify('prefsd_changes', payload);
    END IF;
END;
$$;

ALTER FUNCTION prefsd_commit(jsonb, jsonb, jsonb, jsonb, jsonb, jsonb, bigint, bigint, bigint, text)
    SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION prefsd_begin(bigint, boolean) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION prefsd_commit_after(
    bigint, text[], boolean, text[], text[], text[], boolean, jsonb, jsonb, jsonb, jsonb, jsonb, jsonb, bigint, bigint, text)
    SET plan_cache_mode = force_generic_plan;
