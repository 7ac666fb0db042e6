-- prefsd's schema on PostgreSQL, as of 0.1.0: the tables any number of hosts share, and the
-- functions their writers call. Later changes are new files after this one; a file that has
-- shipped is never edited (Migrations/SHA256SUMS holds each to its checksum).
--
-- How the writers use the functions: a batch works on the state its host has taken in and
-- commits in one call — prefsd_commit_batch, or, once it has opened a transaction to write draft
-- rows at once, prefsd_commit_after — which takes the one-row revision counter
-- (change_log_state), checks that no other host changed what the batch read since
-- (prefsd_check_reads), writes its rows with their revisions moved past the others'
-- (prefsd_write), records the batch and its requests' outcomes (prefsd_record) and notifies the
-- other hosts. A batch run again after a conflict holds the counter from its start
-- (prefsd_begin) and commits with prefsd_commit. A batch that wrote nothing checks its reads
-- with prefsd_reads_after.

-- MARK: Preferences and the change log

-- A value set for `key` at `scope` (a path such as '/' or '/accounts/alice'), as JSON text.
CREATE TABLE preference (
    key      text   NOT NULL,
    scope    text   NOT NULL,
    value    text   NOT NULL,          -- canonical JSON, exactly as given
    revision bigint NOT NULL,          -- the change that last set it
    PRIMARY KEY (key, scope)
);

-- A lock pins `key` for `scope` and everything below it to the value that resolves at `scope`.
CREATE TABLE preference_lock (
    key      text   NOT NULL,
    scope    text   NOT NULL,
    revision bigint NOT NULL,
    PRIMARY KEY (key, scope)
);

-- A schema registered for a key, as JSON text.
CREATE TABLE preference_schema (
    key        text   NOT NULL PRIMARY KEY,
    definition text   NOT NULL,
    revision   bigint NOT NULL
);

-- Every committed change, one row per revision, in the transaction of the change itself. The
-- log is the truth every host applies to its cache and watchers; a notification only wakes them.
CREATE TABLE change (
    revision        bigint  NOT NULL PRIMARY KEY,
    kind            text    NOT NULL,  -- set | reset | lock | unlock | schema | draft.* | attachment.* | validation
    key             text,
    scope           text,
    value           text,              -- canonical JSON of the new value (set), or schema (schema)
    old_value       text,              -- what it replaced, so history can be replayed at a scope
    draft           text,
    attachment      text,
    account         text,
    thread          text,
    previous_thread text,
    draft_revision  bigint,
    valid           boolean,
    created_at      double precision NOT NULL  -- seconds since 1970
);

-- One row: the revision counter and the change log's start. A writer locks it first
-- (SELECT … FOR UPDATE), so transactions commit one at a time in revision order, and each
-- sets `newest_revision` to its last revision just before it commits: revisions are gap-free
-- and their order is commit order, whichever host commits.
CREATE TABLE change_log_state (
    id              integer NOT NULL PRIMARY KEY CHECK (id = 1),
    newest_revision bigint  NOT NULL,
    oldest_revision bigint  NOT NULL
);
INSERT INTO change_log_state (id, newest_revision, oldest_revision) VALUES (1, 0, 1);

-- MARK: Drafts, attachments and their bytes

CREATE TABLE draft (
    id              text    NOT NULL PRIMARY KEY,   -- UUID
    account         text    NOT NULL,
    thread          text,
    position        integer,                        -- dense from 0 within a thread; NULL outside one
    reply_to        text,
    text            text    NOT NULL,
    content_warning text,
    visibility      text    NOT NULL CHECK (visibility IN ('public', 'unlisted', 'private', 'direct')),
    language        text,
    sensitive       boolean NOT NULL,
    poll            text,                           -- JSON {options, expiresIn, multiple}
    created_at      double precision NOT NULL,
    updated_at      double precision NOT NULL,
    revision        bigint  NOT NULL                -- the draft's own, from 1
);
CREATE INDEX draft_by_account ON draft (account, created_at);
CREATE INDEX draft_by_thread ON draft (thread, position) WHERE thread IS NOT NULL;

-- Bytes, stored once per content: a blob row and its chunks (256 KiB each, in order), freed
-- when the last attachment that uses them goes.
CREATE TABLE blob (
    sha256      text    NOT NULL PRIMARY KEY,
    byte_size   bigint  NOT NULL,
    chunk_count integer NOT NULL
);

CREATE TABLE blob_chunk (
    sha256 text    NOT NULL REFERENCES blob (sha256) ON DELETE CASCADE,
    number integer NOT NULL,
    data   bytea   NOT NULL,
    PRIMARY KEY (sha256, number)
);

CREATE TABLE attachment (
    id         text    NOT NULL PRIMARY KEY,        -- UUID
    draft      text    NOT NULL REFERENCES draft (id) ON DELETE CASCADE,
    position   integer NOT NULL,                    -- dense from 0 within the draft
    kind       text    NOT NULL,
    mime_type  text    NOT NULL,
    filename   text    NOT NULL,
    byte_size  bigint  NOT NULL,
    sha256     text    NOT NULL REFERENCES blob (sha256),
    alt_text   text,
    width      integer,
    height     integer
);
CREATE INDEX attachment_by_draft ON attachment (draft, position);
CREATE INDEX attachment_by_blob ON attachment (sha256);

-- MARK: Idempotent requests and committed batches

-- One idempotent request's outcome under its key: its answer, or the refusal that changed nothing.
CREATE TABLE idempotent_request (
    key           text             NOT NULL PRIMARY KEY, -- the client's Idempotency-Key
    fingerprint   text             NOT NULL,             -- what the request asked for, hashed
    refused       boolean          NOT NULL,             -- `outcome` is the refusal's error body
    outcome       text             NOT NULL,             -- the answer as JSON
    base_revision bigint           NOT NULL,             -- the revision the request's batch worked from
    shift         bigint           NOT NULL,             -- how far its batch's revisions moved as it committed
    created_at    double precision NOT NULL              -- seconds since 1970; pruned after the retention
);
CREATE INDEX idempotent_request_by_age ON idempotent_request (created_at);

-- A batch a host committed, by the id the host gave it; kept ten minutes.
CREATE TABLE write_batch (
    id              text             NOT NULL PRIMARY KEY,
    newest_revision bigint,                                -- its last revision; NULL: fenced, never committed
    created_at      double precision NOT NULL
);
CREATE INDEX write_batch_by_age ON write_batch (created_at);

-- MARK: Rows as the functions answer them

-- A row of a page of the change log as a writer reads it: the log's newest and oldest revision,
-- and one change (its columns NULL when the page is empty).
CREATE TYPE prefsd_change_page_row AS (
    log_newest_revision bigint, log_oldest_revision bigint,
    revision bigint, kind text, key text, scope text, value text, old_value text, draft text, attachment text,
    account text, thread text, previous_thread text, draft_revision bigint, valid boolean
);

-- A change-log row as a commit answers it: the columns of `change` but its time.
CREATE TYPE prefsd_change AS (
    revision bigint, kind text, key text, scope text, value text, old_value text, draft text, attachment text,
    account text, thread text, previous_thread text, draft_revision bigint, valid boolean
);

-- MARK: Reading what other hosts committed

-- Reads the changes other hosts committed after `after_revision` — with nothing to read, one row
-- whose change columns are NULL — and, with `lock_counter`, first locks the revision counter:
-- writers on every host then commit one at a time, in revision order. The page is read by a
-- statement of its own, once the lock is granted, so it holds every commit made before (a
-- statement's snapshot is taken when it starts).
CREATE FUNCTION prefsd_begin(after_revision bigint, lock_counter boolean) RETURNS SETOF prefsd_change_page_row
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    newest bigint;
    oldest bigint;
BEGIN
    IF lock_counter THEN
        SELECT s.newest_revision, s.oldest_revision INTO newest, oldest FROM change_log_state s WHERE s.id = 1 FOR UPDATE;
    ELSE
        SELECT s.newest_revision, s.oldest_revision INTO newest, oldest FROM change_log_state s WHERE s.id = 1;
    END IF;
    RETURN QUERY
    SELECT newest, oldest, c.revision, c.kind, c.key, c.scope, c.value, c.old_value, c.draft, c.attachment,
        c.account, c.thread, c.previous_thread, c.draft_revision, c.valid
    FROM (SELECT 1) one
    LEFT JOIN change c ON c.revision > after_revision AND c.revision <= newest
    ORDER BY c.revision;
END;
$$;

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

-- Whether a change after `start` up to `upto` touches a key in `keys_read` (any key with
-- `all_keys_read`), a draft in `drafts_read` (any draft with `all_drafts_read`), or the drafts
-- of an account in `accounts_read` or of a thread in `threads_read`.
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

-- Fails (serialization_failure) if a change after `start` up to `upto` touches what a batch read.
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

-- What other hosts committed after `start`, for a batch that read but wrote nothing: fails
-- (serialization_failure) if any of it touches what the batch read. It takes no lock: the
-- batch's outcome holds as of this statement's snapshot. Its rows are prefsd_begin's.
CREATE FUNCTION prefsd_reads_after(
    start bigint, keys_read text[], all_keys_read boolean, drafts_read text[], accounts_read text[],
    threads_read text[], all_drafts_read boolean
) RETURNS SETOF prefsd_change_page_row LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    newest bigint;
BEGIN
    SELECT s.newest_revision INTO newest FROM change_log_state s WHERE s.id = 1;
    IF newest > start THEN
        PERFORM prefsd_check_reads(
            start, newest, keys_read, all_keys_read, drafts_read, accounts_read, threads_read, all_drafts_read);
    END IF;
    RETURN QUERY SELECT * FROM prefsd_begin(start, false);
END;
$$;

-- MARK: Committing

-- Writes a batch: every row's last write (JSON arrays of rows), each revision moved up by
-- `shift`; the new log entries; the compaction (`keep_from`); the revision counter (`newest`);
-- and — when the batch made changes (`newest` above `start`) — the notification other hosts
-- wake on, carrying only `payload` (the sender and the new revision), never the data.
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

-- Records a committing batch: its id with its last revision, and its requests' outcomes, their
-- revisions moved by `shift`. Fails (serialization_failure) if another writer stored an outcome
-- under one of `keys_checked` — keys the batch looked up and did not find — meanwhile. Drops
-- outcomes stored before `prune_before` (0: none), and then batch ids over ten minutes old.
CREATE FUNCTION prefsd_record(
    batch text, newest bigint, outcomes jsonb, keys_checked text[], shift bigint, now double precision,
    prune_before double precision
) RETURNS void LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    IF cardinality(keys_checked) > 0 AND EXISTS (SELECT 1 FROM idempotent_request WHERE key = ANY (keys_checked)) THEN
        RAISE EXCEPTION 'another host stored the outcome of a request this batch carried'
            USING ERRCODE = 'serialization_failure';
    END IF;
    IF outcomes <> '[]' THEN
        INSERT INTO idempotent_request (key, fingerprint, refused, outcome, base_revision, shift, created_at)
        SELECT r.key, r.fingerprint, r.refused, r.outcome, r.base_revision, shift, r.created_at
        FROM jsonb_to_recordset(outcomes) AS r(
            key text, fingerprint text, refused boolean, outcome text, base_revision bigint, created_at double precision);
    END IF;
    INSERT INTO write_batch (id, newest_revision, created_at) VALUES (batch, newest, now);
    IF prune_before > 0 THEN
        DELETE FROM idempotent_request WHERE created_at < prune_before;
        -- A lost commit is looked up within seconds (30 at most): ten minutes is plenty, even
        -- with hosts' clocks apart.
        DELETE FROM write_batch WHERE created_at < now - 600;
    END IF;
END;
$$;

-- Commits a batch that held the counter from its start (prefsd_begin): nothing moves.
CREATE FUNCTION prefsd_commit(
    upserted jsonb, deleted jsonb, locked jsonb, unlocked jsonb, registered jsonb, logged jsonb,
    keep_from bigint, newest bigint, start bigint, payload text,
    batch text, outcomes jsonb, keys_checked text[], now double precision, prune_before double precision
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM prefsd_write(upserted, deleted, locked, unlocked, registered, logged, keep_from, newest, start, payload, 0);
    PERFORM prefsd_record(batch, newest, outcomes, keys_checked, 0, now, prune_before);
END;
$$;

-- Commits an optimistic batch that opened a transaction (for a row it wrote at once), after what
-- other hosts committed since `start` — unless that touches what it read; its rows are the
-- others' changes (prefsd_begin's), each with the log's newest revision once they are in.
CREATE FUNCTION prefsd_commit_after(
    start bigint, keys_read text[], all_keys_read boolean, drafts_read text[], accounts_read text[],
    threads_read text[], all_drafts_read boolean,
    upserted jsonb, deleted jsonb, locked jsonb, unlocked jsonb, registered jsonb, logged jsonb,
    keep_from bigint, newest bigint, payload_prefix text,
    batch text, outcomes jsonb, keys_checked text[], now double precision, prune_before double precision
) RETURNS SETOF prefsd_change_page_row LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    moved bigint;
BEGIN
    SELECT s.newest_revision - start INTO moved FROM change_log_state s WHERE s.id = 1 FOR UPDATE;
    IF moved > 0 THEN
        PERFORM prefsd_check_reads(
            start, start + moved, keys_read, all_keys_read, drafts_read, accounts_read, threads_read, all_drafts_read);
    END IF;
    RETURN QUERY SELECT * FROM prefsd_begin(start, false);
    PERFORM prefsd_write(
        upserted, deleted, locked, unlocked, registered, logged, keep_from, newest + moved, start + moved,
        payload_prefix || (newest + moved), moved);
    PERFORM prefsd_record(batch, newest + moved, outcomes, keys_checked, moved, now, prune_before);
END;
$$;

-- Commits an optimistic batch that opened no transaction, and commits before it answers: what
-- other hosts committed up to `seen`, the newest revision before the counter is taken, is
-- checked and read first; under the counter, only what they committed after `seen`. `changes`
-- are the others' changes, in revision order.
CREATE PROCEDURE prefsd_commit_batch(
    start bigint, keys_read text[], all_keys_read boolean, drafts_read text[], accounts_read text[],
    threads_read text[], all_drafts_read boolean,
    upserted jsonb, deleted jsonb, locked jsonb, unlocked jsonb, registered jsonb, logged jsonb,
    keep_from bigint, newest bigint, payload_prefix text,
    batch text, outcomes jsonb, keys_checked text[], now double precision, prune_before double precision,
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
    PERFORM prefsd_record(batch, newest + moved, outcomes, keys_checked, moved, now, prune_before);
    COMMIT;
END;
$$;
