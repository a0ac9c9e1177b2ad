-- The drivers list's status filter (docs/api.md, Lead status) is counted
-- like the other filters of one column: the count of each status is kept
-- in application_counts under the dimension 'status', as delta rows that
-- the folds of migration 0015 fold, so a status alone is a few index
-- entries rather than a count(*) over every match (100,000 applicants
-- of one status at 100,000 applications).
--
-- A trigger of its own rather than another branch of
-- count_application_changes: every statement that writes applications
-- (intake, status changes, resets, erasures by cascade) goes through it,
-- and an update that moves no status cancels out and writes nothing.
CREATE FUNCTION count_application_statuses() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO application_counts (account_id, dimension, value, n)
        SELECT account_id, 'status', status, count(*) FROM new_rows GROUP BY 1, 3;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO application_counts (account_id, dimension, value, n)
        SELECT account_id, 'status', status, -count(*) FROM old_rows GROUP BY 1, 3;
    ELSE
        INSERT INTO application_counts (account_id, dimension, value, n)
        SELECT account_id, 'status', status, sum(n)
          FROM (SELECT account_id, status, 1 AS n FROM new_rows
                UNION ALL SELECT account_id, status, -1 FROM old_rows) c
         GROUP BY 1, 3 HAVING sum(n) <> 0;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER applications_status_counted_insert AFTER INSERT ON applications
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION count_application_statuses();
CREATE TRIGGER applications_status_counted_update AFTER UPDATE ON applications
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION count_application_statuses();
CREATE TRIGGER applications_status_counted_delete AFTER DELETE ON applications
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION count_application_statuses();

-- The statuses of the applications already stored are counted after this
-- migration, one account a transaction (statuscountbackfill.go), as
-- migration 0015's counts were: the triggers count every write from here
-- on, and the fill deletes the delta rows its own snapshot counts.
CREATE TABLE application_status_counts_backfill (account_id bigint PRIMARY KEY);

INSERT INTO application_status_counts_backfill (account_id) SELECT id FROM accounts;
