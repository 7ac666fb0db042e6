-- Device sync (prefsd 0.3): what an upstream keeps about the devices that sync with it, and what a
-- replica keeps about its upstream. A store may be both: an upstream to its devices, and a replica
-- of its own upstream.
--
-- The conflicts sync resolves are keyed by the revision of their `conflict` change, so they move
-- with a batch committed after other hosts' changes exactly as its log rows do: they wait with the
-- batch's other rows (PendingWrites) and are written by the commit functions, which take them as
-- one more argument (`conflicts`, after `logged`). This build calls those new forms; 0001's stay,
-- for hosts of an earlier build still running while the others upgrade (they resolve no
-- conflicts), and write the new `stamp` column as NULL through the prefsd_write below.

-- MARK: The change log

-- When a device made a change that sync took in: its hybrid logical clock's stamp, written as
-- `MILLISECONDS.COUNTER@DEVICE` (SyncStamp's text). NULL for a change made here. A later change of
-- the same entry from another device is resolved against it (last writer wins by stamp).
ALTER TABLE change ADD COLUMN stamp text;

-- MARK: An upstream's side

-- The highest sequence number taken in from each device (a named token): a mutation pushed again
-- with a sequence at or below it is a duplicate, and changes nothing. A host taking in a device's
-- exchange makes sure the row exists and locks it (SELECT … FOR UPDATE) in the batch's
-- transaction, so two hosts given one device's exchanges take them in one after the other.
CREATE TABLE sync_device (
    device           text   NOT NULL PRIMARY KEY,  -- the token's name
    applied_sequence bigint NOT NULL
);

-- Every conflict sync resolved, under the revision of its `conflict` change in the log. Kept for
-- good: compacting the log drops the change, never this row — whatever lost is here. Few rows,
-- read by revision (the primary key) or time (which rises with it), and by key or scope through
-- them: no other index.
CREATE TABLE sync_conflict (
    revision   bigint           NOT NULL PRIMARY KEY,
    key        text             NOT NULL,
    scope      text             NOT NULL,
    rule       text             NOT NULL,  -- lww | max | min | union | upstream | refused
    winner     text             NOT NULL,  -- JSON of a SyncConflict.Side: {value, device, stamp, revision, sequence}
    losers     text             NOT NULL,  -- JSON array of sides
    created_at double precision NOT NULL,  -- seconds since 1970
    detail     text                        -- why, where the rule alone does not say (a refusal's reason)
);

-- MARK: A replica's side

-- One row, once the store has synced: the upstream, what it said of the device's token, how far
-- the replica has taken in its log, the device's clock and its next outbox sequence.
CREATE TABLE sync_replica (
    id             integer NOT NULL PRIMARY KEY CHECK (id = 1),
    upstream       text    NOT NULL,   -- the upstream's URL, as configured
    device         text,               -- the token's name, once the upstream has said it
    role           text,               -- reader | writer | admin, likewise
    scope          text,               -- likewise
    cursor         bigint  NOT NULL,   -- the upstream revision taken in up to (0: nothing yet)
    snapshot_taken boolean NOT NULL,
    clock          text,               -- the clock's latest stamp: a restart never stamps earlier
    next_sequence  bigint  NOT NULL    -- what the next outbox entry takes
);

-- Local changes not yet pushed, one SyncRequest.Mutation each, pushed in sequence order and
-- removed once the upstream has answered for them.
CREATE TABLE sync_outbox (
    sequence   bigint  NOT NULL PRIMARY KEY,
    key        text    NOT NULL,
    scope      text    NOT NULL,
    value      text,               -- canonical JSON of the value set; NULL: a reset
    base       bigint  NOT NULL,   -- the upstream revision of the entry it was based on (0: none)
    base_value text,               -- that entry's value, canonical JSON; NULL: none
    stamp      text    NOT NULL,   -- when, by the device's clock (its device part empty)
    if_absent  boolean,            -- made before the first snapshot: applied only over no entry
    author     text,
    reason     text
);

-- What the replica last took in from its upstream for each entry: the upstream revision and
-- value a local change is based on.
CREATE TABLE sync_base (
    key      text   NOT NULL,
    scope    text   NOT NULL,
    revision bigint NOT NULL,      -- the entry's upstream revision (0: none)
    value    text,                 -- canonical JSON; NULL: none
    PRIMARY KEY (key, scope)
);

-- MARK: Committing

-- prefsd_write as 0002 has it, but for the log entries' stamp.
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
            previous_thread, draft_revision, valid, created_at, author, agent, host, reason, stamp)
        SELECT r.revision + shift, r.kind, r.key, r.scope, r.value, r.old_value,
            -- A revision this batch made (after its start, `start - shift`) moves with it; one committed
            -- before stays.
            CASE WHEN r.old_revision > start - shift THEN r.old_revision + shift ELSE r.old_revision END,
            r.draft, r.attachment, r.account, r.thread, r.previous_thread, r.draft_revision, r.valid, r.created_at,
            r.author, r.agent, r.host, r.reason, r.stamp
        FROM jsonb_to_recordset(logged) AS r(
            revision bigint, kind text, key text, scope text, value text, old_value text, old_revision bigint,
            draft text, attachment text, account text, thread text, previous_thread text, draft_revision bigint,
            valid boolean, created_at double precision, author text, agent text, host text, reason text, stamp text);
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

-- A side of a conflict (JSON) whose upstream revision is one its batch made — after the batch's
-- `start` — moved up by `shift`, as the batch's revisions are; any other side as it is.
CREATE FUNCTION prefsd_moved_side(side jsonb, start bigint, shift bigint) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN (side ->> 'revision')::bigint > start
        THEN jsonb_set(side, '{revision}', to_jsonb((side ->> 'revision')::bigint + shift))
        ELSE side END
$$;

-- Writes a batch's conflicts (a JSON array of rows, `winner` and `losers` JSON text), each under
-- its revision moved up by `shift`, like the batch's log rows, and the revisions its sides name
-- that the batch made (after `start`, where the batch began) likewise. Unmoved, the sides are
-- stored as the writer wrote them.
CREATE FUNCTION prefsd_write_conflicts(conflicts jsonb, start bigint, shift bigint) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    IF conflicts <> '[]' THEN
        INSERT INTO sync_conflict (revision, key, scope, rule, winner, losers, created_at, detail)
        SELECT r.revision + shift, r.key, r.scope, r.rule,
            CASE WHEN shift = 0 THEN r.winner ELSE prefsd_moved_side(r.winner::jsonb, start, shift)::text END,
            CASE WHEN shift = 0 THEN r.losers ELSE (
                SELECT coalesce(jsonb_agg(prefsd_moved_side(l.side, start, shift) ORDER BY l.n), '[]')::text
                FROM jsonb_array_elements(r.losers::jsonb) WITH ORDINALITY AS l(side, n)) END,
            r.created_at, r.detail
        FROM jsonb_to_recordset(conflicts) AS r(
            revision bigint, key text, scope text, rule text, winner text, losers text, created_at double precision,
            detail text);
    END IF;
END;
$$;

-- prefsd_commit as 0001 has it, and the batch's conflicts: nothing moves.
CREATE FUNCTION prefsd_commit(
    upserted jsonb, deleted jsonb, locked jsonb, unlocked jsonb, registered jsonb, logged jsonb, conflicts jsonb,
    keep_from bigint, newest bigint, start bigint, payload text,
    batch text, outcomes jsonb, keys_checked text[], now double precision, prune_before double precision
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM prefsd_write(upserted, deleted, locked, unlocked, registered, logged, keep_from, newest, start, payload, 0);
    PERFORM prefsd_write_conflicts(conflicts, start, 0);
    PERFORM prefsd_record(batch, newest, outcomes, keys_checked, 0, now, prune_before);
END;
$$;

-- prefsd_commit_after as 0001 has it, and the batch's conflicts, moved with its rows.
CREATE FUNCTION prefsd_commit_after(
    start bigint, keys_read text[], all_keys_read boolean, drafts_read text[], accounts_read text[],
    threads_read text[], all_drafts_read boolean,
    upserted jsonb, deleted jsonb, locked jsonb, unlocked jsonb, registered jsonb, logged jsonb, conflicts jsonb,
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
    PERFORM prefsd_write_conflicts(conflicts, start, moved);
    PERFORM prefsd_record(batch, newest + moved, outcomes, keys_checked, moved, now, prune_before);
END;
$$;

-- prefsd_commit_batch as 0001 has it, and the batch's conflicts, moved with its rows.
CREATE PROCEDURE prefsd_commit_batch(
    start bigint, keys_read text[], all_keys_read boolean, drafts_read text[], accounts_read text[],
    threads_read text[], all_drafts_read boolean,
    upserted jsonb, deleted jsonb, locked jsonb, unlocked jsonb, registered jsonb, logged jsonb, conflicts jsonb,
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
    PERFORM prefsd_write_conflicts(conflicts, start, moved);
    PERFORM prefsd_record(batch, newest + moved, outcomes, keys_checked, moved, now, prune_before);
    COMMIT;
END;
$$;
