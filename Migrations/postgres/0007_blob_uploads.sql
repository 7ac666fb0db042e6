-- Blobs sent by their hash (prefsd 0.4, `PATCH /v1/blobs/{sha256}`): a device pushes an
-- attachment's bytes to its upstream before the draft that uses them, resumably after a cut.

-- MARK: Uploads under way

-- One upload of a blob by one uploader (a named token; '' for the socket's owner and the file
-- token), its bytes so far in chunks in the order they came (of any size up to 256 KiB: a cut
-- ends one short). Once `received` reaches `byte_size` and the bytes hash to `sha256`, they
-- become a blob and the upload goes; one left alone for a day is dropped.
CREATE TABLE blob_upload (
    sha256      text             NOT NULL,
    uploader    text             NOT NULL,
    byte_size   bigint           NOT NULL,  -- the whole blob's, as Upload-Length said
    received    bigint           NOT NULL,  -- the bytes held so far
    chunk_count integer          NOT NULL,
    updated_at  double precision NOT NULL,  -- when bytes last came (seconds since 1970)
    PRIMARY KEY (sha256, uploader)
);

CREATE TABLE blob_upload_chunk (
    sha256   text    NOT NULL,
    uploader text    NOT NULL,
    number   integer NOT NULL,
    data     bytea   NOT NULL,
    PRIMARY KEY (sha256, uploader, number),
    FOREIGN KEY (sha256, uploader) REFERENCES blob_upload (sha256, uploader) ON DELETE CASCADE
);

-- MARK: Who uploaded a blob

-- Each uploader of a stored blob, and when it last sent (or re-sent) it: a token below `/` may
-- read the blobs it uploaded, and a blob uploaded within the last day is kept though no
-- attachment uses it yet. Older rows of a blob no attachment uses are dropped, and the blob
-- with the last of them.
CREATE TABLE blob_uploader (
    sha256      text             NOT NULL REFERENCES blob (sha256) ON DELETE CASCADE,
    uploader    text             NOT NULL,
    uploaded_at double precision NOT NULL,
    PRIMARY KEY (sha256, uploader)
);
CREATE INDEX blob_uploader_by_time ON blob_uploader (uploaded_at);
CREATE INDEX blob_upload_by_time ON blob_upload (updated_at);
