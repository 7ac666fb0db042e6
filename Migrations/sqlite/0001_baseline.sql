-- prefsd's schema on SQLite, as of 0.1.0. Later changes are new files after this one; a file that
-- has shipped is never edited (Migrations/SHA256SUMS holds each to its checksum).

-- MARK: Preferences and the change log

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
    account    TEXT,                    -- a draft change: whose, where, and the draft's revision
    thread     TEXT,                    -- and validity after it
    previous_thread TEXT,
    draft_revision  INTEGER,
    valid      INTEGER,
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

-- MARK: Drafts, attachments and their bytes

CREATE TABLE draft (
    id              TEXT    NOT NULL PRIMARY KEY,   -- UUID
    account         TEXT    NOT NULL,
    thread          TEXT,
    position        INTEGER,                        -- dense from 0 within a thread; NULL outside one
    reply_to        TEXT,
    text            TEXT    NOT NULL,
    content_warning TEXT,
    visibility      TEXT    NOT NULL CHECK (visibility IN ('public', 'unlisted', 'private', 'direct')),
    language        TEXT,
    sensitive       INTEGER NOT NULL,
    poll            TEXT,                           -- JSON {options, expiresIn, multiple}
    created_at      REAL    NOT NULL,
    updated_at      REAL    NOT NULL,
    revision        INTEGER NOT NULL                -- the draft's own, from 1
);
CREATE INDEX draft_by_account ON draft (account, created_at);
CREATE INDEX draft_by_thread ON draft (thread, position) WHERE thread IS NOT NULL;

-- Bytes, stored once per content: a blob row and its chunks (256 KiB each, in order), freed
-- when the last attachment that uses them goes.
CREATE TABLE blob (
    sha256      TEXT    NOT NULL PRIMARY KEY,
    byte_size   INTEGER NOT NULL,
    chunk_count INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE blob_chunk (
    sha256 TEXT    NOT NULL REFERENCES blob (sha256) ON DELETE CASCADE,
    number INTEGER NOT NULL,
    data   BLOB    NOT NULL,
    UNIQUE (sha256, number)
);

CREATE TABLE attachment (
    id         TEXT    NOT NULL PRIMARY KEY,        -- UUID
    draft      TEXT    NOT NULL REFERENCES draft (id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,                    -- dense from 0 within the draft
    kind       TEXT    NOT NULL,
    mime_type  TEXT    NOT NULL,
    filename   TEXT    NOT NULL,
    byte_size  INTEGER NOT NULL,
    sha256     TEXT    NOT NULL REFERENCES blob (sha256),
    alt_text   TEXT,
    width      INTEGER,
    height     INTEGER
);
CREATE INDEX attachment_by_draft ON attachment (draft, position);
CREATE INDEX attachment_by_blob ON attachment (sha256);

-- MARK: Idempotent requests

-- One request's outcome under its key: its answer, or the refusal that changed nothing. Rows are
-- appended in the order they are stored (`id`), so only the small index on `key` is written at
-- random places; pruning drops the oldest rows by `id`.
CREATE TABLE idempotent_request (
    id            INTEGER NOT NULL PRIMARY KEY,
    key           TEXT    NOT NULL UNIQUE,      -- the client's Idempotency-Key
    fingerprint   TEXT    NOT NULL,             -- what the request asked for, hashed
    refused       INTEGER NOT NULL,             -- 1: `outcome` is the refusal's error body
    outcome       TEXT    NOT NULL,             -- the answer as JSON
    base_revision INTEGER NOT NULL,             -- the revision the request's batch worked from
    created_at    REAL    NOT NULL              -- seconds since 1970; pruned after the retention
);
