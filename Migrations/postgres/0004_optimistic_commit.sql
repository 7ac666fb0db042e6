-- Hosts' group commits run side by side: a batch begins without locking the revision counter
-- (prefsd_begin with `lock_counter` false) and takes it only in the call that commits it
-- (prefsd_commit_after). If others committed meanwhile, and none of their changes touches what
-- the batch read, the batch's revisions move up past theirs and it commits; otherwise the call
-- fails (serialization_failure) and the host runs the batch again, holding the counter from its
-- start (prefsd_begin with `lock_counter` true). Revisions stay gap-free and in commit order:
-- they are fixed under the counter's lock.

-- `rows` (JSON objects with a "revision") with each revision moved up by `shift`.
CREATE FUNCTION prefsd_shift(rows jsonb, shift bigint) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN shift = 0 THEN rows ELSE (
        SELECT coalesce(jsonb_agg(jsonb_set(r.element, '{revision}', to_jsonb((r.element ->> 'revision')::bigint + shift))), '[]'::jsonb)
        FROM jsonb_array_elements(rows) AS r(element))
    END
$$;

-- Commits an optimistic batch that began at revision `start`: locks the counter; if others have
-- committed since, checks that none of their changes touches a key in `keys_read` (every key
-- with `all_keys_read`), a draft in `drafts_read` (every draft with `all_drafts_read`), or the
-- drafts of an account in `accounts_read` or of a thread in `threads_read`; then writes the batch
-- as prefsd_commit does, its revisions moved up past theirs (a compaction keeps `keep_from` as
-- it is, so that the host's idea of the log's start stays exact), and notifies with
-- `payload_prefix` and the new revision. Returns the others' changes as prefsd_begin reads them:
-- the shift is the log's newest revision, on every row, less `start`.
CREATE FUNCTION prefsd_commit_after(
    start bigint, keys_read text[], all_keys_read boolean, drafts_read text[], accounts_read text[],
    threads_read text[], all_drafts_read boolean,
    upserted jsonb, deleted jsonb, locked jsonb, unlocked jsonb, registered jsonb, logged jsonb,
    keep_from bigint, newest bigint, payload_prefix text
) RETURNS SETOF prefsd_change_page_row LANGUAGE plpgsql AS $$
DECLARE
    moved bigint;
BEGIN
    SELECT s.newest_revision - start INTO moved FROM change_log_state s WHERE s.id = 1 FOR UPDATE;
    IF moved > 0 THEN
        IF EXISTS (
            SELECT 1 FROM change c
            WHERE c.revision > start AND c.revision <= start + moved AND (
                (all_keys_read AND c.key IS NOT NULL) OR c.key = ANY (keys_read)
                OR (all_drafts_read AND c.draft IS NOT NULL) OR c.draft = ANY (drafts_read)
                OR c.account = ANY (accounts_read) OR c.thread = ANY (threads_read)
                OR c.previous_thread = ANY (threads_read))
        ) THEN
            RAISE EXCEPTION 'another host changed what this transaction read' USING ERRCODE = 'serialization_failure';
        END IF;
    END IF;
    RETURN QUERY SELECT * FROM prefsd_begin(start, false);
    PERFORM prefsd_commit(
        prefsd_shift(upserted, moved), deleted, prefsd_shift(locked, moved), unlocked, prefsd_shift(registered, moved),
        prefsd_shift(logged, moved), keep_from, newest + moved, start + moved, payload_prefix || (newest + moved));
END;
$$;
