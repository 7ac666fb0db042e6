-- Drafts, their attachments, and the content-addressed bytes attachments share.

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

-- Draft changes in the change log: whose, where, and the draft's revision and validity after.
ALTER TABLE change ADD COLUMN account TEXT;
ALTER TABLE change ADD COLUMN thread TEXT;
ALTER TABLE change ADD COLUMN previous_thread TEXT;
ALTER TABLE change ADD COLUMN draft_revision INTEGER;
ALTER TABLE change ADD COLUMN valid INTEGER;
