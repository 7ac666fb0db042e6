-- A write's outcome is never misreported.
--
-- idempotent_request keeps the outcome of every write sent with an Idempotency-Key, in the
-- write's own transaction: the same request sent again — to this host or another, after a lost
-- connection or a restart — gets it and changes nothing.
--
-- write_batch keeps the id of every batch that committed, written in its transaction: a host
-- whose connection is lost while its batch commits looks the id up on a new connection, after
-- fencing it (inserting it with no revision, which waits for a commit still under way and makes
-- a later one fail), so it knows whether the batch committed — and never runs again a batch that
-- did, which used to make a conditional write that took effect answer 412.
--
-- The commit functions take the batch's id, outcomes and pruning as arguments: prefsd_commit,
-- prefsd_commit_after and prefsd_commit_batch are made anew with them (and prefsd_commit_after
-- moves its rows' revisions as prefsd_commit_batch does, with prefsd_write's `shift`).
-- prefsd_commit_optimistic (0006), which no host calls any more, is dropped.

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

-- Each name has one definition, so it needs no argument list.
DROP PROCEDURE prefsd_commit_optimistic;
DROP FUNCTION prefsd_commit;
DROP FUNCTION prefsd_commit_after;
DROP PROCEDURE prefsd_commit_batch;

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
