-- Blobs a device knows of but has not fetched (prefsd 0.4, on-demand downloads): a replica takes
-- in the drafts of other devices with their attachments, and fetches an attachment's bytes from
-- its upstream only when the attachment is read. Until then its blob row says how large the
-- bytes are and that none of them is here: `held` is 0 and there are no chunks. Fetched, the row
-- is held (1) and its chunks follow, as every blob's. An upstream's blobs are all held.
ALTER TABLE blob ADD COLUMN held INTEGER NOT NULL DEFAULT 1;
