-- Device sync (prefsd 0.3): what an upstream keeps about the devices that sync with it, and what a
-- replica keeps about its upstream. A store may be both: an upstream to its devices, and a replica
-- of its own upstream.

-- MARK: The change log

-- When a device made a change that sync took in: its hybrid logical clock's stamp, written as
-- `MILLISECONDS.COUNTER@DEVICE` (SyncStamp's text). NULL for a change made here. A later change of
-- the same entry from another device is resolved against it (last writer wins by stamp).
ALTER TABLE change ADD COLUMN stamp TEXT;

-- MARK: An upstream's side

-- The highest sequence number taken in from each device (a named token): a mutation pushed again
-- with a sequence at or below it is a duplicate, and changes nothing. Written in the transaction
-- that takes the mutations in, so the number and the changes commit together.
CREATE TABLE sync_device (
    device           TEXT    NOT NULL PRIMARY KEY,  -- the token's name
    applied_sequence INTEGER NOT NULL
) WITHOUT ROWID;

-- Every conflict sync resolved, under the revision of its `conflict` change in the log. Kept for
-- good: compacting the log drops the change, never this row — whatever lost is here. Few rows,
-- read by revision (the primary key) or time (which rises with it), and by key or scope through
-- them: no other index.
CREATE TABLE sync_conflict (
    revision   INTEGER NOT NULL PRIMARY KEY,
    key        TEXT    NOT NULL,
    scope      TEXT    NOT NULL,
    rule       TEXT    NOT NULL,    -- lww | max | min | union | upstream | refused
    winner     TEXT    NOT NULL,    -- JSON of a SyncConflict.Side: {value, device, stamp, revision, sequence}
    losers     TEXT    NOT NULL,    -- JSON array of sides
    created_at REAL    NOT NULL,    -- seconds since 1970
    detail     TEXT                 -- why, where the rule alone does not say (a refusal's reason)
);

-- MARK: A replica's side

-- One row, once the store has synced: the upstream, what it said of the device's token, how far
-- the replica has taken in its log, the device's clock and its next outbox sequence.
CREATE TABLE sync_replica (
    id             INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    upstream       TEXT    NOT NULL,    -- the upstream's URL, as configured
    device         TEXT,                -- the token's name, once the upstream has said it
    role           TEXT,                -- reader | writer | admin, likewise
    scope          TEXT,                -- likewise
    cursor         INTEGER NOT NULL,    -- the upstream revision taken in up to (0: nothing yet)
    snapshot_taken INTEGER NOT NULL,    -- 1 once a snapshot was taken in
    clock          TEXT,                -- the clock's latest stamp: a restart never stamps earlier
    next_sequence  INTEGER NOT NULL     -- what the next outbox entry takes
);

-- Local changes not yet pushed, one SyncRequest.Mutation each, pushed in sequence order and
-- removed once the upstream has answered for them.
CREATE TABLE sync_outbox (
    sequence   INTEGER NOT NULL PRIMARY KEY,
    key        TEXT    NOT NULL,
    scope      TEXT    NOT NULL,
    value      TEXT,                -- canonical JSON of the value set; NULL: a reset
    base       INTEGER NOT NULL,    -- the upstream revision of the entry it was based on (0: none)
    base_value TEXT,                -- that entry's value, canonical JSON; NULL: none
    stamp      TEXT    NOT NULL,    -- when, by the device's clock (its device part empty)
    if_absent  INTEGER,             -- 1: made before the first snapshot, applied only over no entry
    author     TEXT,
    reason     TEXT
);

-- What the replica last took in from its upstream for each entry: the upstream revision and
-- value a local change is based on.
CREATE TABLE sync_base (
    key      TEXT    NOT NULL,
    scope    TEXT    NOT NULL,
    revision INTEGER NOT NULL,      -- the entry's upstream revision (0: none)
    value    TEXT,                  -- canonical JSON; NULL: none
    PRIMARY KEY (key, scope)
) WITHOUT ROWID;
