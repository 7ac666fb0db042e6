-- Preferences: values set at scopes, locks, schemas, and the change log every write appends to.
-- Any number of prefsd hosts share these tables.

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

-- What a group commit writes just before COMMIT, in one call whose statements keep their plans:
-- every row's last write (JSON arrays of rows), the new log entries, the compaction, the revision
-- counter, and — when the transaction made changes — the notification other hosts wake on,
-- carrying only `payload` (the sender and the new revision), never the data.
CREATE FUNCTION prefsd_commit(
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
        DELETE FROM change WHERE revision < keep_from;
    END IF;
    UPDATE change_log_state
    SET newest_revision = newest, oldest_revision = greatest(oldest_revision, keep_from)
    WHERE id = 1;
    IF newest > start THEN
        PERFORM pg_notify('prefsd_changes', payload);
    END IF;
END;
$$;
