-- What compaction dropped, with when (prefsd 0.3): for each key, scope and kind, the newest dropped
-- row's stamp and time beside its revision, so that an upstream can still resolve a device's change
-- of an entry whose last change — a reset, say — compaction dropped by its stamp (last writer
-- wins) rather than against nothing. Rows recorded before this migration have neither (NULL).

-- MARK: Compaction

-- The newest dropped row's stamp (`change.stamp`: a device's, NULL for a change made here) and time
-- (`change.created_at`, seconds since 1970). Written with its revision, and replaced only by a
-- newer one.
ALTER TABLE compacted_entry ADD COLUMN stamp TEXT;
ALTER TABLE compacted_entry ADD COLUMN time REAL;
