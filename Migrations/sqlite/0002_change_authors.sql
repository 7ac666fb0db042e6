-- Who made each change and why, what it replaced, and the indexes that history and the audit
-- log read by (prefsd 0.2).

-- The revision of the entry a change replaced (the value's, for set and reset; the lock's, for
-- unlock), so that a read in the past gives the revision a value had then.
ALTER TABLE change ADD COLUMN old_revision INTEGER;
-- Who: the user or token (NULL for changes made before this migration), the program that sent it,
-- and the host that committed it (on a database several hosts share).
ALTER TABLE change ADD COLUMN author TEXT;
ALTER TABLE change ADD COLUMN agent TEXT;
ALTER TABLE change ADD COLUMN host TEXT;
-- Why, when the writer said (`Prefs-Reason`, `--reason`).
ALTER TABLE change ADD COLUMN reason TEXT;

-- A key's changes in revision order: its history, and the audit log by key or prefix.
CREATE INDEX change_by_key ON change (key, revision) WHERE key IS NOT NULL;
-- The audit log between two times.
CREATE INDEX change_by_time ON change (created_at);
