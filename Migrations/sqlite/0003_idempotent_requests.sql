-- The outcome of every write sent with an Idempotency-Key, stored in the write's own transaction:
-- the same request sent again (after a lost connection, a restart) gets it and changes nothing.

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
