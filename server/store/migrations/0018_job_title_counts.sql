-- The job_title filter's exact count at a million applications: the
-- applicants of a title are the distinct drivers among its job
-- applications, which a count(DISTINCT) finds by reading every one (67,000
-- index entries, 16 ms, for one title at a million applications).
--
-- job_title_applicants holds each (account, title, driver) once, with n,
-- the number of the driver's job applications of that title. The triggers
-- below keep it by upserts, so the changes of one pair wait on its row
-- however they come (an intake, a job renamed, a cascading delete): a
-- pair appears when n leaves 0 and goes when it returns to 0, each exactly
-- once. Each appearance adds +1 and each removal -1 to the title's count in
-- application_counts (dimension 'job_title', migration 0015), as delta
-- rows that the fold compacts: the list then reads a count, not its rows.
CREATE TABLE job_title_applicants (
    account_id      bigint NOT NULL,
    job_title_lower text   NOT NULL,
    driver_id       bigint NOT NULL,
    n               bigint NOT NULL,
    PRIMARY KEY (account_id, job_title_lower, driver_id)
);

-- The accounts whose job applications stored before this migration are not
-- counted yet (Store.Migrate fills them one by one, jobtitlebackfill.go).
-- The triggers leave these accounts' changes to the fill, and take a key
-- share lock on the account's row here when they do: the fill deletes the
-- row first, so it waits for those writers to commit and then counts what
-- they wrote; writers that come after wait for the fill (one account's
-- job applications, for as long as its count takes) and then count on top
-- of it. The table stays, empty, for the triggers to read.
CREATE TABLE job_title_counts_backfill (account_id bigint PRIMARY KEY);

INSERT INTO job_title_counts_backfill (account_id) SELECT id FROM accounts;

-- count_job_title_changes applies one statement's changes, one element per
-- (account, title, driver) with the change of its n, never 0. Pairs are
-- written in key order so that two statements touching the same pairs
-- (two renames of jobs of one title) lock them in the same order.
CREATE FUNCTION count_job_title_changes(accounts bigint[], titles text[], drivers bigint[], deltas bigint[])
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    pending bigint[];
BEGIN
    SELECT coalesce(array_agg(account_id), '{}') INTO pending
      FROM (SELECT account_id FROM job_title_counts_backfill WHERE account_id = ANY (accounts)
             ORDER BY account_id FOR KEY SHARE) b;
    WITH c AS (SELECT * FROM unnest(accounts, titles, drivers, deltas) u (account_id, job_title_lower, driver_id, d)
                WHERE u.account_id <> ALL (pending)),
    written AS (
        INSERT INTO job_title_applicants AS p (account_id, job_title_lower, driver_id, n)
        SELECT account_id, job_title_lower, driver_id, d FROM c ORDER BY 1, 2, 3
        ON CONFLICT (account_id, job_title_lower, driver_id) DO UPDATE SET n = p.n + EXCLUDED.n
        RETURNING p.account_id, p.job_title_lower, p.driver_id, p.n)
    INSERT INTO application_counts (account_id, dimension, value, n)
    SELECT w.account_id, 'job_title', w.job_title_lower,
           sum(CASE WHEN w.n = 0 THEN -1 WHEN c.d > 0 AND w.n = c.d THEN 1 ELSE 0 END)
      FROM written w JOIN c USING (account_id, job_title_lower, driver_id)
     GROUP BY 1, 3
    HAVING sum(CASE WHEN w.n = 0 THEN -1 WHEN c.d > 0 AND w.n = c.d THEN 1 ELSE 0 END) <> 0;
    -- The row lock taken above is still held: no other writer can have
    -- raised n in between.
    DELETE FROM job_title_applicants p
     USING unnest(accounts, titles, drivers, deltas) u (account_id, job_title_lower, driver_id, d)
     WHERE u.d < 0 AND p.account_id = u.account_id AND p.job_title_lower = u.job_title_lower
       AND p.driver_id = u.driver_id AND p.n = 0;
END;
$$;

-- The net change of each pair over a statement's rows: an upsert that
-- keeps a row's title changes nothing; one that moves it changes two.
CREATE FUNCTION count_job_application_changes() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM count_job_title_changes(array_agg(account_id), array_agg(job_title_lower), array_agg(driver_id), array_agg(d))
           FROM (SELECT account_id, job_title_lower, driver_id, count(*) AS d FROM new_rows GROUP BY 1, 2, 3) c
         HAVING count(*) > 0;
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM count_job_title_changes(array_agg(account_id), array_agg(job_title_lower), array_agg(driver_id), array_agg(d))
           FROM (SELECT account_id, job_title_lower, driver_id, -count(*) AS d FROM old_rows GROUP BY 1, 2, 3) c
         HAVING count(*) > 0;
    ELSE
        PERFORM count_job_title_changes(array_agg(account_id), array_agg(job_title_lower), array_agg(driver_id), array_agg(d))
           FROM (SELECT account_id, job_title_lower, driver_id, sum(d)::bigint AS d
                   FROM (SELECT account_id, job_title_lower, driver_id, 1::bigint AS d FROM new_rows
                         UNION ALL SELECT account_id, job_title_lower, driver_id, -1 FROM old_rows) r
                  GROUP BY 1, 2, 3 HAVING sum(d) <> 0) c
         HAVING count(*) > 0;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER job_applications_counted_insert AFTER INSERT ON job_applications
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION count_job_application_changes();
CREATE TRIGGER job_applications_counted_update AFTER UPDATE ON job_applications
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION count_job_application_changes();
CREATE TRIGGER job_applications_counted_delete AFTER DELETE ON job_applications
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION count_job_application_changes();
