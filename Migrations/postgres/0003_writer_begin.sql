-- A writer's transaction begins with one call (prefsd_begin) instead of two statements, and a
-- writer keeps its next transaction open between group commits (COMMIT AND CHAIN): a group
-- commit takes three round trips to the database, two of them while it holds the counter.

-- A row of a page of the change log as a writer reads it: the log's newest and oldest revision,
-- and one change (its columns NULL when the page is empty).
CREATE TYPE prefsd_change_page_row AS (
    log_newest_revision bigint, log_oldest_revision bigint,
    revision bigint, kind text, key text, scope text, value text, old_value text, draft text, attachment text,
    account text, thread text, previous_thread text, draft_revision bigint, valid boolean
);

-- Reads the changes other hosts committed after `after_revision` — with nothing to read, one row
-- whose change columns are NULL — and, with `lock_counter`, first locks the revision counter:
-- writers on every host then commit one at a time, in revision order. The page is read by a
-- statement of its own, once the lock is granted, so it holds every commit made before (a
-- statement's snapshot is taken when it starts).
CREATE FUNCTION prefsd_begin(after_revision bigint, lock_counter boolean) RETURNS SETOF prefsd_change_page_row
LANGUAGE plpgsql AS $$
DECLARE
    newest bigint;
    oldest bigint;
BEGIN
    IF lock_counter THEN
        SELECT s.newest_revision, s.oldest_revision INTO newest, oldest FROM change_log_state s WHERE s.id = 1 FOR UPDATE;
    ELSE
        SELECT s.newest_revision, s.oldest_revision INTO newest, oldest FROM change_log_state s WHERE s.id = 1;
    END IF;
    RETURN QUERY
    SELECT newest, oldest, c.revision, c.kind, c.key, c.scope, c.value, c.old_value, c.draft, c.attachment,
        c.account, c.thread, c.previous_thread, c.draft_revision, c.valid
    FROM (SELECT 1) one
    LEFT JOIN change c ON c.revision > after_revision AND c.revision <= newest
    ORDER BY c.revision;
END;
$$;
