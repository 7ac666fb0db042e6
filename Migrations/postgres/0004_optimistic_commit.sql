-- Hosts' group commits run side by side: a batch begins without locking the revision counter
-- (prefsd_begin with `lock_counter` false) and takes it only in the call that commits it
-- (prefsd_commit_after). If others committed meanwhile, and none of their changes touches what
-- the batch read, the batch's revisions move up past theirs and it commits; otherwise the call
-- fails (serialization_failure) and the host runs the batch again, holding the counter from its
-- start (prefsd_begin with `lock_counter` true). Revisions stay gap-free and in commit order:
-- they are fixed under the counter's lock.

-- `rows` (JSON objects with a "revision") with each revision moved up by `shift`.
CREATE FUNCTION prefsd_shift(rows jsonb, shift bigint) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(jsonb_agg(jsonb_set(r.element, '{revision}', to_jsonb((r.element ->> 'revision')::bigint + shift))), '[]'::jsonb)
    FROM jsonb_array_elements(rows) AS r(element)
$$;

-- Commits an optimistic batch that began at revision `start`: locks the counter; if others have
-- committed since, checks that none of their changes touches a key in `keys_read` (every key
-- with `all_keys_read`), a draft in `drafts_read` (every draft with `all_drafts_read`), or the
-- drafts of an account in `accounts_read` or of a thread in `threads_read`; then writes the batch
-- as prefsd_commit does, its revisions moved up past theirs (a compaction keeps `keep_from` as
-- it is, so that the host's idea of the log's start stays exact), and notifies with
-- `payload_prefix` and the new revision. Returns the shift and the others' changes (the page prefsd_begin would
-- have read), or one row with NULL change columns when there are none.
CREATE FUNCTION prefsd_commit_after(
    start bigint, keys_read text[], all_keys_read boolean, drafts_read text[], accounts_read text[],
    threads_read text[], all_drafts_read boolean,
    upserted jsonb, deleted jsonb, locked jsonb, unlocked jsonb, registered jsonb, logged jsonb,
    keep_from bigint, newest bigint, payload_prefix text
) RETURNS TABLE (
    shift bigint, log_oldest_revision bigint,
    revision bigint, kind text, key text, scope text, value text, old_value text, draft text, attachment text,
    account text, thread text, previous_thread text, draft_revision bigint, valid boolean
) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    current bigint;
    moved bigint;
BEGIN
    SELECT s.newest_revision INTO current FROM change_log_state s WHERE s.id = 1 FOR UPDATE;
    moved := current - start;
    IF moved = 0 THEN
        RETURN QUERY SELECT 0::bigint, s.oldest_revision, NULL::bigint, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
            NULL, NULL, NULL::bigint, NULL::boolean
        FROM change_log_state s WHERE s.id = 1;
        PERFORM prefsd_commit(
            upserted, deleted, locked, unlocked, registered, logged, keep_from, newest, start, payload_prefix || newest);
        RETURN;
    END IF;
    IF EXISTS (
        SELECT 1 FROM change c
        WHERE c.revision > start AND c.revision <= current AND (
            (all_keys_read AND c.key IS NOT NULL) OR c.key = ANY (keys_read)
            OR (all_drafts_read AND c.draft IS NOT NULL) OR c.draft = ANY (drafts_read)
            OR c.account = ANY (accounts_read) OR c.thread = ANY (threads_read) OR c.previous_thread = ANY (threads_read))
    ) THEN
        RAISE EXCEPTION 'another host changed what this transaction read' USING ERRCODE = 'serialization_failure';
    END IF;
    RETURN QUERY
    SELECT moved, s.oldest_revision, c.revision, c.kind, c.key, c.scope, c.value, c.old_value, c.draft, c.attachment,
        c.account, c.thread, c.previous_thread, c.draft_revision, c.valid
    FROM change_log_state s
    LEFT JOIN change c ON c.revision > start AND c.revision <= current
    WHERE s.id = 1
    ORDER BY c.revision;
    PERFORM prefsd_commit(
        prefsd_shift(upserted, moved), deleted, prefsd_shift(locked, moved), unlocked, prefsd_shift(registered, moved),
        prefsd_shift(logged, moved), keep_from, newest + moved, start + moved, payload_prefix || (newest + moved));
END;
$$;
