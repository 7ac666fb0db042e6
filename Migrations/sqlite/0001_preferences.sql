-- Preferences: values set at scopes, locks, schemas, and the change log every write appends to.

-- A value set for `key` at `scope` (a path such as '/' or '/accounts/alice'), as JSON text.
CREATE TABLE preference (
    key      TEXT    NOT NULL,
    scope    TEXT    NOT NULL,
    value    TEXT    NOT NULL,          -- canonical JSON
    revision INTEGER NOT NULL,          -- the change that last set it
    PRIMARY KEY (key, scope)
) WITHOUT ROWID;

-- A lock pins `key` for `scope` and everything below it to the value that resolves at `scope`.
CREATE TABLE preference_lock (
    key      TEXT    NOT NULL,
    scope    TEXT    NOT NULL,
    revision INTEGER NOT NULL,
    PRIMARY KEY (key, scope)
) WITHOUT ROWID;

-- A schema registered for a key (from `prefsd --schema FILE` or the API), as JSON text.
CREATE TABLE preference_schema (
    key        TEXT    NOT NULL PRIMARY KEY,
    definition TEXT    NOT NULL,
    revision   INTEGER NOT NULL
) WITHOUT ROWID;

-- Every committed change, one row per revision, in the transaction of the change itself.
-- At least the newest `--retain-changes` rows are kept (compacted in steps, not at every commit);
-- `change_log_state.oldest_revision` says where the kept history starts.
CREATE TABLE change (
    revision   INTEGER NOT NULL PRIMARY KEY,
    kind       TEXT    NOT NULL,        -- set | reset | lock | unlock | schema | …
    key        TEXT,
    scope      TEXT,
    value      TEXT,                    -- canonical JSON of the new value (set), or schema (schema)
    old_value  TEXT,                    -- what it replaced, so history can be replayed at a scope
    draft      TEXT,
    attachment TEXT,
    created_at REAL    NOT NULL         -- seconds since 1970
);

-- One row, written when the change log is compacted: the newest revision then, and the oldest
-- one the change log still holds. The newest revision now is the greater of `current_revision`
-- and the log's last row.
CREATE TABLE change_log_state (
    id              INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    current_revision INTEGER NOT NULL,
    oldest_revision  INTEGER NOT NULL
);
INSERT INTO change_log_state (id, current_revision, oldest_revision) VALUES (1, 0, 1);
