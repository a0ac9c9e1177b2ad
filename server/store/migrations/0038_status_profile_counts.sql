-- The drivers list's lead statuses with state, driver type or job
-- applications are counted like those three without a status
-- (application_day_counts, job_title_profile_counts): one row per status
-- and profile, as delta rows the folds fold. Without them such a total was
-- a count(*) over the matches: status=new&driver_type=Company Driver&
-- has_job_apps=1 read 400,000 index entries at 1,000,000 applications,
-- 230 ms, where a status's rows here are a few hundred.
--
-- A table of its own rather than a status column in
-- application_profile_counts: that table's rows are the combinations of
-- five columns (65,000 of one account at 1,000,000 applications), and a
-- sixth would multiply the rows every count there reads.
CREATE TABLE application_status_profile_counts (
    account_id   bigint  NOT NULL,
    status       text    NOT NULL,
    state        text    NOT NULL,
    driver_type  text    NOT NULL,
    has_job_apps boolean NOT NULL,
    n            bigint  NOT NULL
);

-- The status leads: every count here names one or more statuses, and the
-- state, when given, narrows each status's range.
CREATE INDEX application_status_profile_counts_idx ON application_status_profile_counts
    (account_id, status, state, driver_type, has_job_apps) INCLUDE (n);

-- Writers that ran migration 0034's function, which does not write the new
-- rows, finish before this migration goes on; writers after it wait for
-- its commit and run the function below. So every application is either
-- counted by its own delta rows or committed before the account's fill
-- takes its snapshot (statuscountbackfill.go).
LOCK TABLE applications IN SHARE MODE;

-- Migration 0034's trigger function, counting each status with its profile
-- too. An update that moves none of the four columns cancels out and
-- writes nothing.
CREATE OR REPLACE FUNCTION count_application_statuses() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        WITH c AS (SELECT account_id, status, state, driver_type, has_job_apps, 1 AS n FROM new_rows),
        profiled AS (INSERT INTO application_status_profile_counts
                         (account_id, status, state, driver_type, has_job_apps, n)
            SELECT account_id, status, state, driver_type, has_job_apps, sum(n) FROM c GROUP BY 1, 2, 3, 4, 5)
        INSERT INTO application_counts (account_id, dimension, value, n)
        SELECT account_id, 'status', status, sum(n) FROM c GROUP BY 1, 3;
    ELSIF TG_OP = 'DELETE' THEN
        WITH c AS (SELECT account_id, status, state, driver_type, has_job_apps, -1 AS n FROM old_rows),
        profiled AS (INSERT INTO application_status_profile_counts
                         (account_id, status, state, driver_type, has_job_apps, n)
            SELECT account_id, status, state, driver_type, has_job_apps, sum(n) FROM c GROUP BY 1, 2, 3, 4, 5)
        INSERT INTO application_counts (account_id, dimension, value, n)
        SELECT account_id, 'status', status, sum(n) FROM c GROUP BY 1, 3;
    ELSE
        WITH c AS (SELECT account_id, status, state, driver_type, has_job_apps, 1 AS n FROM new_rows
                   UNION ALL SELECT account_id, status, state, driver_type, has_job_apps, -1 FROM old_rows),
        profiled AS (INSERT INTO application_status_profile_counts
                         (account_id, status, state, driver_type, has_job_apps, n)
            SELECT account_id, status, state, driver_type, has_job_apps, sum(n)
              FROM c GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0)
        INSERT INTO application_counts (account_id, dimension, value, n)
        SELECT account_id, 'status', status, sum(n) FROM c GROUP BY 1, 3 HAVING sum(n) <> 0;
    END IF;
    RETURN NULL;
END;
$$;

-- The applications already stored are counted after this migration, one
-- account a transaction (statuscountbackfill.go), as migration 0034's
-- statuses were.
CREATE TABLE application_status_profile_counts_backfill (account_id bigint PRIMARY KEY);

INSERT INTO application_status_profile_counts_backfill (account_id) SELECT id FROM accounts;
