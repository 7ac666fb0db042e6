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
    key      TEXT    NOT NULL,
    scope    TEXT    NOT NULL,  -- '' for a schema's
    kind     TEXT    NOT NULL,
    revision INTEGER NOT NULL,  -- the newest dropped
    stamp    TEXT,              -- its stamp (`change.stamp`: a device's; NULL for a change made here)
    time     REAL    NOT NULL,  -- its time (`change.created_at`, seconds since 1970)
    PRIMARY KEY (key, scope, kind)
) WITHOUT ROWID;
