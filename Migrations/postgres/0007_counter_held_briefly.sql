-- A group commit holds the revision counter only while it writes and commits, and answers the
-- others' changes as an array of rows, not as JSON text.
--
-- Hosts' group commits queue on the counter's row lock, so the time a commit holds it bounds how
-- many commits all hosts together make. prefsd_commit_optimistic held it from its first
-- statement: it checked and read the others' changes under it, and moved the revisions of the
-- batch's rows past theirs by rebuilding each JSON array (prefsd_shift). Its successor,
-- prefsd_commit_batch, checks and reads what others committed before it takes the counter, and
-- under the counter only what they committed in between (usually nothing); the rows' revisions
-- move as they are inserted (prefsd_write's `shift`). And it answers the others' changes as a
-- prefsd_change[], which the driver receives in binary: building and parsing the JSON had cost
-- the server and the host more than anything else about those rows.
--
-- prefsd_commit_optimistic stays as 0006 made it (with prefsd_shift) for the hosts of the
-- previous release while they are replaced; prefsd_commit keeps its signature and meaning, and
-- prefsd_commit_after (a batch that opened a transaction) is unchanged.

-- A change-log row as a commit answers it: the columns of `change` but its time.
CREATE TYPE prefsd_change AS (
    revision bigint, kind text, key text, scope text, value text, old_value text, draft text, attachment text,
    account text, thread text, previous_thread text, draft_revision bigint, valid boolean
);

-- The changes after `after` up to `upto`, in revision order.
CREATE FUNCTION prefsd_changes(after bigint, upto bigint) RETURNS prefsd_change[] LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (SELECT coalesce(array_agg(
            ROW(c.revision, c.kind, c.key, c.scope, c.value, c.old_value, c.draft, c.attachment, c.account, c.thread,
                c.previous_thread, c.draft_revision, c.valid)::prefsd_change
            ORDER BY c.revision), '{}')
        FROM change c WHERE c.revision > after AND c.revision <= upto);
END;
$$;

-- Fails (serialization_failure) if a change after `start` up to `upto` touches what a batch read
-- (prefsd_touches_reads).
CREATE FUNCTION prefsd_check_reads(
    start bigint, upto bigint, keys_read text[], all_keys_read boolean, drafts_read text[], accounts_read text[],
    threads_read text[], all_drafts_read boolean
) RETURNS void LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF prefsd_touches_reads(
        start, upto, keys_read, all_keys_read, drafts_read, accounts_read, threads_read, all_drafts_read)
    THEN
        RAISE EXCEPTION 'another host changed what this transaction read' USING ERRCODE = 'serialization_failure';
    END IF;
END;
$$;

-- Writes a batch as prefsd_commit does, each row's revision moved up by `shift`.
CREATE FUNCTION prefsd_write(
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
            revision, kind, key, scope, value, old_value, draft, attachment, account, thread, previous_thread,
            draft_revision, valid, created_at)
        SELECT r.revision + shift, r.kind, r.key, r.scope, r.value, r.old_value, r.draft, r.attachment, r.account,
            r.thread, r.previous_thread, r.draft_revision, r.valid, r.created_at
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

-- prefsd_commit as 0006 made it: its batch held the counter from its start, so nothing moves.
CREATE OR REPLACE FUNCTION prefsd_commit(
    upserted jsonb, deleted jsonb, locked jsonb, unlocked jsonb, registered jsonb, logged jsonb,
    keep_from bigint, newest bigint, start bigint, payload text
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM prefsd_write(upserted, deleted, locked, unlocked, registered, logged, keep_from, newest, start, payload, 0);
END;
$$;

-- Commits an optimistic batch that opened no transaction, as prefsd_commit_optimistic does
-- (0006), but what other hosts committed up to `seen`, the newest revision before the counter is
-- taken, is checked and read before; under the counter, only what they committed after `seen`.
-- `changes` are the others' changes, in revision order.
CREATE PROCEDURE prefsd_commit_batch(
    start bigint, keys_read text[], all_keys_read boolean, drafts_read text[], accounts_read text[],
    threads_read text[], all_drafts_read boolean,
    upserted jsonb, deleted jsonb, locked jsonb, unlocked jsonb, registered jsonb, logged jsonb,
    keep_from bigint, newest bigint, payload_prefix text,
    OUT log_newest_revision bigint, OUT log_oldest_revision bigint, OUT changes prefsd_change[]
) LANGUAGE plpgsql AS $$
DECLARE
    seen bigint;
    moved bigint;
BEGIN
    changes := '{}';
    SELECT s.newest_revision INTO seen FROM change_log_state s WHERE s.id = 1;
    IF seen > start THEN
        PERFORM prefsd_check_reads(
            start, seen, keys_read, all_keys_read, drafts_read, accounts_read, threads_read, all_drafts_read);
        changes := prefsd_changes(start, seen);
    ELSE
        seen := start;
    END IF;
    SELECT s.newest_revision, s.oldest_revision INTO log_newest_revision, log_oldest_revision
    FROM change_log_state s WHERE s.id = 1 FOR UPDATE;
    IF log_newest_revision > seen THEN
        PERFORM prefsd_check_reads(
            seen, log_newest_revision, keys_read, all_keys_read, drafts_read, accounts_read, threads_read, all_drafts_read);
        changes := changes || prefsd_changes(seen, log_newest_revision);
    END IF;
    moved := log_newest_revision - start;
    PERFORM prefsd_write(
        upserted, deleted, locked, unlocked, registered, logged, keep_from, newest + moved, start + moved,
        payload_prefix || (newest + moved), moved);
    COMMIT;
END;
$$;
