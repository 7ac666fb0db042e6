-- What compacting the log dropped (prefsd 0.3): for each key, scope ('' for a schema's) and kind
-- among the rows it dropped, the newest row dropped — its revision, and its stamp and time. Written
-- by the compaction in the statements that drop the rows, replaced only by a newer one. A reader
-- that follows some keys from revision R (a watch resumed, a device's cursor) reads the log after
-- R, then these rows: if none of those it follows is after R, no change it follows was lost, and
-- the log's rows after R (with those kept below its oldest revision) are all of them. An upstream
-- resolves a device's change of an entry whose last change — a reset, say — was dropped against
-- this row's stamp (last writer wins), not against nothing.

-- MARK: Compaction

CREATE TABLE compacted_entry (
    key      text             NOT NULL,
    scope    text             NOT NULL,  -- '' for a schema's
    kind     text             NOT NULL,
    revision bigint           NOT NULL,  -- the newest dropped
    stamp    text,                       -- its stamp (`change.stamp`: a device's; NULL for a change made here)
    time     double precision NOT NULL,  -- its time (`change.created_at`, seconds since 1970)
    PRIMARY KEY (key, scope, kind)
);

-- MARK: Committing

-- prefsd_write as 0004 has it, but for its compaction, which records what it drops in
-- compacted_entry: the newest dropped row of each key, scope and kind (DISTINCT ON, by revision).
-- The commit functions call it by name, so hosts of an earlier build still running while the others
-- upgrade record it as well.
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
        -- What the compaction drops, by key, scope and kind: the newest row dropped (its revision,
        -- stamp and time), kept with the rows that say what a follower lost (compacted_entry)
        -- unless a newer one is there.
        WITH dropped AS (
            DELETE FROM change
            WHERE revision < keep_from
                AND revision NOT IN (SELECT revision FROM preference UNION ALL SELECT revision FROM preference_lock
                    UNION ALL SELECT revision FROM preference_schema)
            RETURNING key, scope, kind, revision, stamp, created_at)
        INSERT INTO compacted_entry (key, scope, kind, revision, stamp, time)
        SELECT DISTINCT ON (d.key, coalesce(d.scope, ''), d.kind)
            d.key, coalesce(d.scope, ''), d.kind, d.revision, d.stamp, d.created_at
        FROM dropped d
        WHERE d.key IS NOT NULL
        ORDER BY d.key, coalesce(d.scope, ''), d.kind, d.revision DESC
        ON CONFLICT (key, scope, kind) DO UPDATE
        SET revision = excluded.revision, stamp = excluded.stamp, time = excluded.time
        WHERE excluded.revision > compacted_entry.revision;
    END IF;
    UPDATE change_log_state
    SET newest_revision = newest, oldest_revision = greatest(oldest_revision, keep_from)
    WHERE id = 1;
    IF newest > start THEN
        PERFORM pg_notify('prefsd_changes', payload);
    END IF;
END;
$$;
