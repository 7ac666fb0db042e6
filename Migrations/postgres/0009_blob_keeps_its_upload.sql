-- A blob sent by its hash keeps its bytes where they came (prefsd 0.4): once its upload is whole
-- and hashes to its name, the upload's chunks become the blob's without being copied. `uploader`
-- names that upload (its `blob_upload` row then stays, whole, as long as the blob does); it is
-- NULL for a blob whose chunks are in `blob_chunk` (an attachment posted whole, bytes a device
-- fetched). A blob's bytes are read from one place or the other, never both.
ALTER TABLE blob ADD COLUMN uploader text;

-- Deleting a blob deletes the upload holding its bytes, and their chunks with it.
CREATE FUNCTION blob_deletes_its_upload() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM blob_upload WHERE sha256 = OLD.sha256 AND uploader = OLD.uploader;
    RETURN OLD;
END
$$;

CREATE TRIGGER blob_deletes_its_upload AFTER DELETE ON blob FOR EACH ROW WHEN (OLD.uploader IS NOT NULL)
EXECUTE FUNCTION blob_deletes_its_upload();
