-- A group commit takes one round trip to the database, not three, and runs no statement for
-- rows it does not write.
--
-- A batch no longer begins by reading what other hosts committed (prefsd_begin): it works on the
-- state the host has taken in, and its commit reads the rest, checking that none of it touches
-- what the batch read — which now also covers a batch that writes nothing (its requests failed,
-- or changed nothing): prefsd_reads_after checks it without taking the counter.
--
-- And the commit is a procedure, prefsd_commit_optimistic, which commits inside the call: the
-- server answers once the commit is durable, so the host no longer follows the statement with
-- an empty one to learn that the commit at the protocol's Sync is done. A procedure returns one
-- row, so the others' changes come back as the text of a JSON array, each element a
-- prefsd_change_page_row.

-- Whether a change after `start` up to `upto` touches a key in `keys_read` (any key with
-- `all_keys_read`), a draft in `drafts_read` (any draft with `all_drafts_read`), or the drafts
-- of an account in `accounts_read` or of a thread in `threads_read`. (PL/pgSQL, whose query
-- keeps its plan; its callers plan generically.)
CREATE FUNCTION prefsd_touches_reads(
    start bigint, upto bigint, keys_read text[], all_keys_read boolean, drafts_read text[], accounts_read text[],
    threads_read text[], all_drafts_read boolean
) RETURNS boolean LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN EXISTS (
        SELECT 1 FROM change c
        WHERE c.revision > start AND c.revision <= upto AND (
            (all_keys_read AND c.key IS NOT NULL) OR c.key = ANY (keys_read)
            OR (all_drafts_read AND c.draft IS NOT NULL) OR c.draft = ANY (drafts_read)
            OR c.account = ANY (accounts_read) OR c.thread = ANY (threads_read)
            OR c.previous_thread = ANY (threads_read)));
END;
$$;

-- prefsd_commit_after as 0004 made it, its check now prefsd_touches_reads.
CREATE OR REPLACE FUNCTION prefsd_commit_after(
    start bigint, keys_read text[], all_keys_read boolean, drafts_read text[], accounts_read text[],
    threads_read text[], all_drafts_read boolean,
    upserted jsonb, deleted jsonb, locked jsonb, unlocked jsonb, registered jsonb, logged jsonb,
    keep_from bigint, newest bigint, payload_prefix text
) RETURNS SETOF prefsd_change_page_row LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    moved bigint;
BEGIN
    SELECT s.newest_revision - start INTO moved FROM change_log_state s WHERE s.id = 1 FOR UPDATE;
    IF moved > 0 AND prefsd_touches_reads(
        start, start + moved, keys_read, all_keys_read, drafts_read, accounts_read, threads_read, all_drafts_read)
    THEN
        RAISE EXCEPTION 'another host changed what this transaction read' USING ERRCODE = 'serialization_failure';
    END IF;
    RETURN QUERY SELECT * FROM prefsd_begin(start, false);
    PERFORM prefsd_commit(
        prefsd_shift(upserted, moved), deleted, prefsd_shift(locked, moved), unlocked, prefsd_shift(registered, moved),
        prefsd_shift(logged, moved), keep_from, newest + moved, start + moved, payload_prefix || (newest + moved));
END;
$$;

-- What other hosts committed after `start`, for a batch that read but wrote nothing: fails
-- (serialization_failure) if any of it touches what the batch read. It takes no lock: the
-- batch's outcome holds as of this statement's snapshot.
CREATE FUNCTION prefsd_reads_after(
    start bigint, keys_read text[], all_keys_read boolean, drafts_read text[], accounts_read text[],
    threads_read text[], all_drafts_read boolean
) RETURNS SETOF prefsd_change_page_row LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    newest bigint;
BEGIN
    SELECT s.newest_revision INTO newest FROM change_log_state s WHERE s.id = 1;
    IF newest > start AND prefsd_touches_reads(
        start, newest, keys_read, all_keys_read, drafts_read, accounts_read, threads_read, all_drafts_read)
    THEN
        RAISE EXCEPTION 'another host changed what this transaction read' USING ERRCODE = 'serialization_failure';
    END IF;
    RETURN QUERY SELECT * FROM prefsd_begin(start, false);
END;
$$;

-- Commits an optimistic batch that opened no transaction, as prefsd_commit_after does, and
-- commits before it returns: `log_newest_revision` is the log's newest revision before the batch
-- (its revisions move up by its distance from `start`), `log_oldest_revision` the log's oldest,
-- and `changes` the others' changes it went after (the text of a JSON array, in revision order;
-- no query reads them when there are none). CALL it on its own, outside a transaction block (a
-- procedure commits only there); it has no SET clause for the same reason.
CREATE PROCEDURE prefsd_commit_optimistic(
    start bigint, keys_read text[], all_keys_read boolean, drafts_read text[], accounts_read text[],
    threads_read text[], all_drafts_read boolean,
    upserted jsonb, deleted jsonb, locked jsonb, unlocked jsonb, registered jsonb, logged jsonb,
    keep_from bigint, newest bigint, payload_prefix text,
    OUT log_newest_revision bigint, OUT log_oldest_revision bigint, OUT changes text
) LANGUAGE plpgsql AS $$
DECLARE
    moved bigint;
BEGIN
    SELECT s.newest_revision, s.oldest_revision INTO log_newest_revision, log_oldest_revision
    FROM change_log_state s WHERE s.id = 1 FOR UPDATE;
    moved := log_newest_revision - start;
    changes := '[]';
    IF moved > 0 THEN
        IF prefsd_touches_reads(
            start, log_newest_revision, keys_read, all_keys_read, drafts_read, accounts_read, threads_read, all_drafts_read)
        THEN
            RAISE EXCEPTION 'another host changed what this transaction read' USING ERRCODE = 'serialization_failure';
        END IF;
        SELECT coalesce(json_agg(c ORDER BY c.revision)::text, '[]') INTO changes FROM (
            SELECT revision, kind, key, scope, value, old_value, draft, attachment, account, thread, previous_thread,
                draft_revision, valid
            FROM change WHERE revision > start AND revision <= log_newest_revision) c;
        upserted := prefsd_shift(upserted, moved);
        locked := prefsd_shift(locked, moved);
        registered := prefsd_shift(registered, moved);
        logged := prefsd_shift(logged, moved);
    END IF;
    PERFORM prefsd_commit(
        upserted, deleted, locked, unlocked, registered, logged, keep_from, newest + moved, start + moved,
        payload_prefix || (newest + moved));
    COMMIT;
END;
$$;

-- prefsd_commit as 0005 made it, but a statement whose rows are none is not run: most group
-- commits only set values, and each statement costs its executor's start and end.
CREATE OR REPLACE FUNCTION prefsd_commit(
    upserted jsonb, deleted jsonb, locked jsonb, unlocked jsonb, registered jsonb, logged jsonb,
    keep_from bigint, newest bigint, start bigint, payload text
) RETURNS void LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    IF upserted <> '[]' THEN
        INSERT INTO preference (key, scope, value, revision)
        SELECT r.key, r.scope, r.value, r.revision
        FROM jsonb_to_recordset(upserted) AS r(key text, scope text, value text, revision bigint)
        ON CONFLICT (key, scope) DO UPDATE SET value = excluded.value, revision = excluded.revision;
    END IF;
    IF deleted <> '[]' THEN
        DELETE FROM preference p USING jsonb_to_recordset(deleted) AS r(key text, scope text)
        WHERE p.key = r.key AND p.scope = r.scope;
    END IF;
    IF locked <> '[]' THEN
        INSERT INTO preference_lock (key, scope, revision)
        SELECT r.key, r.scope, r.revision
        FROM jsonb_to_recordset(locked) AS r(key text, scope text, revision bigint)
        ON CONFLICT (key, scope) DO UPDATE SET revision = excluded.revision;
    END IF;
    IF unlocked <> '[]' THEN
        DELETE FROM preference_lock l USING jsonb_to_recordset(unlocked) AS r(key text, scope text)
        WHERE l.key = r.key AND l.scope = r.scope;
    END IF;
    IF registered <> '[]' THEN
        INSERT INTO preference_schema (key, definition, revision)
        SELECT r.key, r.definition, r.revision
        FROM jsonb_to_recordset(registered) AS r(key text, definition text, revision bigint)
        ON CONFLICT (key) DO UPDATE SET definition = excluded.definition, revision = excluded.revision;
    END IF;
    IF logged <> '[]' THEN
        INSERT INTO change (
            revision, kind, key, scope, value, old_value, draft, attachment, account, thread, previous_thread,
            draft_revision, valid, created_at)
        SELECT r.revision, r.kind, r.key, r.scope, r.value, r.old_value, r.draft, r.attachment, r.account, r.thread,
            r.previous_thread, r.draft_revision, r.valid, r.created_at
        FROM jsonb_to_recordset(logged) AS r(
            revision bigint, kind text, key text, scope text, value text, old_value text, draft text, attachment text,
            account text, thread text, previous_thread text, draft_revision bigint, valid boolean,
            created_at double precision);
    END IF;
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
