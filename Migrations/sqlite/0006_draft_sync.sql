-- Drafts across devices (prefsd 0.4): what an upstream keeps to merge two devices' edits of a
-- draft, and what a replica keeps to push its drafts' changes and take in the upstream's.

-- MARK: Drafts

-- The draft this one is a conflicted copy of (its UUID), when sync made it to keep a device's
-- text that could not be merged; NULL for any other draft.
ALTER TABLE draft ADD COLUMN conflict_of TEXT;
-- 1 when an edit on one device brought the draft back after a delete on another; NULL otherwise.
ALTER TABLE draft ADD COLUMN deleted_elsewhere INTEGER;

-- Each draft as it was at each of its revisions, with when each field last changed: the base a
-- device's change was made on, for the three-way merge of its text, and the stamps that decide a
-- field both devices changed. The last version of a deleted draft says so (and when). Versions
-- older than 30 days are dropped, but each draft's latest.
CREATE TABLE draft_version (
    draft    TEXT    NOT NULL,      -- UUID
    revision INTEGER NOT NULL,      -- the draft's own revision
    body     TEXT    NOT NULL,      -- JSON of a DraftVersion: {id, revision, draft, stamps}; no draft: deleted
    time     REAL    NOT NULL,      -- seconds since 1970
    PRIMARY KEY (draft, revision)
) WITHOUT ROWID;

-- MARK: A replica's side

-- Local draft changes not yet pushed, one DraftMutation each, in the sequence the preference
-- outbox (`sync_outbox`) shares; removed once the upstream has answered for them.
CREATE TABLE sync_draft_outbox (
    sequence INTEGER NOT NULL PRIMARY KEY,
    draft    TEXT    NOT NULL,      -- UUID
    body     TEXT    NOT NULL       -- JSON of a DraftMutation
);

-- Each draft as the replica last took it in from its upstream: the base its next change is
-- pushed on, and the text a three-way merge on the device starts from.
CREATE TABLE sync_draft_base (
    draft    TEXT    NOT NULL PRIMARY KEY,  -- UUID
    revision INTEGER NOT NULL,              -- the draft's revision at the upstream
    body     TEXT                           -- JSON of the Draft; NULL: deleted there
) WITHOUT ROWID;
