-- Who made each change and why, and what it replaced (prefsd 0.2).

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

-- No index by key or by time: every index costs each write a page in a random place, and history
-- and the audit log read the log from its newest end — a key's history stops once it has its
-- steps, a time is reached in revision order (times rise with revisions, but for hosts' clocks
-- apart) — so the log's own order serves them. (An index by key cost 64 clients' writes a fifth
-- to a third of their rate, measured; history is fast enough without.)
