-- Drafts, their attachments, and the content-addressed bytes attachments share.

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
