-- A job title with state, driver type or job applications was counted by
-- a merge of the title's applicants (job_title_applicants, 0018) with the
-- other filter's entries in applications: at 1,000,000 applications, the
-- 100,073 applicants of 'cdl student program' with the 52,457 in TX, 15-20
-- ms beside the page. This keeps each title's applicants by state, driver
-- type and job applications, as delta rows the fold compacts like the
-- other counts, so that count sums a few rows.
--
-- Each pair of job_title_applicants records the profile it is counted
-- under. A pair that appears is counted under its applicant's profile of
-- that moment; one that goes is taken off under the profile it records
-- (its application may be gone by then: a delete's cascade); a profile
-- that changes moves the applicant's pairs (move_job_title_profiles).
ALTER TABLE job_title_applicants
    ADD COLUMN state        text,
    ADD COLUMN driver_type  text,
    ADD COLUMN has_job_apps boolean;

UPDATE job_title_applicants p
   SET state = a.state, driver_type = a.driver_type, has_job_apps = a.has_job_apps
  FROM applications a
 WHERE a.account_id = p.account_id AND a.driver_id = p.driver_id;

ALTER TABLE job_title_applicants
    ALTER COLUMN state        SET NOT NULL,
    ALTER COLUMN driver_type  SET NOT NULL,
    ALTER COLUMN has_job_apps SET NOT NULL;

-- An applicant's pairs, for the moves.
CREATE INDEX job_title_applicants_driver_idx ON job_title_applicants (account_id, driver_id);

CREATE TABLE job_title_profile_counts (
    account_id      bigint  NOT NULL,
    job_title_lower text    NOT NULL,
    state           text    NOT NULL,
    driver_type     text    NOT NULL,
    has_job_apps    boolean NOT NULL,
    n               bigint  NOT NULL
);

CREATE INDEX job_title_profile_counts_idx ON job_title_profile_counts (account_id, job_title_lower)
    INCLUDE (state, driver_type, has_job_apps, n);

-- The accounts still listed in job_title_counts_backfill have no pairs
-- yet: their fill (jobtitlebackfill.go) counts these too.
INSERT INTO job_title_profile_counts (account_id, job_title_lower, state, driver_type, has_job_apps, n)
SELECT account_id, job_title_lower, state, driver_type, has_job_apps, count(*)
  FROM job_title_applicants
 GROUP BY 1, 2, 3, 4, 5;

-- Migration 0018's function, which now records the profile of each pair
-- that appears and counts the pairs by profile as well. A pair is counted
-- under the profile its application has when the pair appears: the share
-- lock on the application rows of the drivers with pairs to add waits for
-- a writer changing that profile to commit (whose move did not see this
-- pair), and holds off one that comes later until this one commits (whose
-- move then sees it). The rows are locked in driver order, the order the
-- intake writes them in; each is a probe of its key.
CREATE OR REPLACE FUNCTION count_job_title_changes(accounts bigint[], titles text[], drivers bigint[], deltas bigint[])
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    pending bigint[];
BEGIN
    SELECT coalesce(array_agg(account_id), '{}') INTO pending
      FROM (SELECT account_id FROM job_title_counts_backfill WHERE account_id = ANY (accounts)
             ORDER BY account_id FOR KEY SHARE) b;
    PERFORM count(*)
       FROM (SELECT DISTINCT account_id, driver_id
               FROM unnest(accounts, drivers, deltas) u (account_id, driver_id, d)
              WHERE u.d > 0 AND u.account_id <> ALL (pending)
              ORDER BY 1, 2) u
      CROSS JOIN LATERAL (SELECT 1 FROM applications a
                           WHERE a.account_id = u.account_id AND a.driver_id = u.driver_id FOR SHARE) l;
    -- A removal always finds its pair, whose recorded profile stays; its
    -- application may be gone already, hence the placeholders, which the
    -- conflict leaves unused.
    WITH c AS (SELECT * FROM unnest(accounts, titles, drivers, deltas) u (account_id, job_title_lower, driver_id, d)
                WHERE u.account_id <> ALL (pending)),
    written AS (
        INSERT INTO job_title_applicants AS p (account_id, job_title_lower, driver_id, n, state, driver_type, has_job_apps)
        SELECT c.account_id, c.job_title_lower, c.driver_id, c.d,
               coalesce(a.state, ''), coalesce(a.driver_type, ''), coalesce(a.has_job_apps, false)
          FROM c LEFT JOIN LATERAL (SELECT state, driver_type, has_job_apps FROM applications a
                                     WHERE a.account_id = c.account_id AND a.driver_id = c.driver_id) a ON true
         ORDER BY 1, 2, 3
        ON CONFLICT (account_id, job_title_lower, driver_id) DO UPDATE SET n = p.n + EXCLUDED.n
        RETURNING p.account_id, p.job_title_lower, p.driver_id, p.n, p.state, p.driver_type, p.has_job_apps),
    changes AS (
        SELECT w.*, CASE WHEN w.n = 0 THEN -1 WHEN c.d > 0 AND w.n = c.d THEN 1 ELSE 0 END AS change
          FROM written w JOIN c USING (account_id, job_title_lower, driver_id)),
    counted AS (
        INSERT INTO application_counts (account_id, dimension, value, n)
        SELECT account_id, 'job_title', job_title_lower, sum(change)
          FROM changes GROUP BY 1, 3 HAVING sum(change) <> 0)
    INSERT INTO job_title_profile_counts (account_id, job_title_lower, state, driver_type, has_job_apps, n)
    SELECT account_id, job_title_lower, state, driver_type, has_job_apps, sum(change)
      FROM changes GROUP BY 1, 2, 3, 4, 5 HAVING sum(change) <> 0;
    -- The row lock taken above is still held: no other writer can have
    -- raised n in between.
    DELETE FROM job_title_applicants p
     USING unnest(accounts, titles, drivers, deltas) u (account_id, job_title_lower, driver_id, d)
     WHERE u.d < 0 AND p.account_id = u.account_id AND p.job_title_lower = u.job_title_lower
       AND p.driver_id = u.driver_id AND p.n = 0;
END;
$$;

-- move_job_title_profiles moves the pairs of the applicants whose state,
-- driver type or job applications an update changed: each pair leaves the
-- profile it records for the new one. The update holds the application
-- rows, so no pair of theirs appears meanwhile; the pairs are locked in
-- driver and title order. An account whose pairs the fill of 0018 has yet
-- to write is left to it, which reads the profiles after this commits.
CREATE FUNCTION move_job_title_profiles() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    accounts     bigint[];
    drivers      bigint[];
    states       text[];
    driver_types text[];
    job_apps     boolean[];
    pending      bigint[];
BEGIN
    -- The new profile of each row whose profile changed is the one group
    -- of its old and new rows that only the new row is in. Grouped, not
    -- joined: the plan of a statement on the transition tables alone is
    -- made once per connection, for the sizes of its first call, and a
    -- join of the two planned after a call of one row ran as a nested
    -- loop: 2.6 s for an update of 3,000 applications, against 0.3 s.
    SELECT array_agg(account_id ORDER BY account_id, driver_id),
           array_agg(driver_id ORDER BY account_id, driver_id),
           array_agg(state ORDER BY account_id, driver_id),
           array_agg(driver_type ORDER BY account_id, driver_id),
           array_agg(has_job_apps ORDER BY account_id, driver_id)
      INTO accounts, drivers, states, driver_types, job_apps
      FROM (SELECT account_id, driver_id, state, driver_type, has_job_apps
              FROM (SELECT account_id, driver_id, state, driver_type, has_job_apps, 1 AS d FROM new_rows
                    UNION ALL
                    SELECT account_id, driver_id, state, driver_type, has_job_apps, -1 FROM old_rows) r
             GROUP BY 1, 2, 3, 4, 5 HAVING sum(d) = 1) moved;
    IF accounts IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT coalesce(array_agg(account_id), '{}') INTO pending
      FROM (SELECT account_id FROM job_title_counts_backfill WHERE account_id = ANY (accounts)
             ORDER BY account_id FOR KEY SHARE) b;
    WITH pairs AS (
        SELECT p.account_id, p.job_title_lower, p.driver_id, p.state, p.driver_type, p.has_job_apps,
               m.state AS to_state, m.driver_type AS to_driver_type, m.has_job_apps AS to_has_job_apps
          FROM unnest(accounts, drivers, states, driver_types, job_apps)
               AS m (account_id, driver_id, state, driver_type, has_job_apps)
         CROSS JOIN LATERAL (SELECT * FROM job_title_applicants p
                              WHERE p.account_id = m.account_id AND p.driver_id = m.driver_id
                              ORDER BY p.job_title_lower FOR UPDATE) p
         WHERE m.account_id <> ALL (pending)
           AND (p.state, p.driver_type, p.has_job_apps) IS DISTINCT FROM (m.state, m.driver_type, m.has_job_apps)),
    counted AS (
        INSERT INTO job_title_profile_counts (account_id, job_title_lower, state, driver_type, has_job_apps, n)
        SELECT account_id, job_title_lower, state, driver_type, has_job_apps, sum(d)
          FROM (SELECT account_id, job_title_lower, state, driver_type, has_job_apps, -1 AS d FROM pairs
                UNION ALL
                SELECT account_id, job_title_lower, to_state, to_driver_type, to_has_job_apps, 1 FROM pairs) x
         GROUP BY 1, 2, 3, 4, 5 HAVING sum(d) <> 0)
    UPDATE job_title_applicants p
       SET state = m.to_state, driver_type = m.to_driver_type, has_job_apps = m.to_has_job_apps
      FROM pairs m
     WHERE p.account_id = m.account_id AND p.job_title_lower = m.job_title_lower AND p.driver_id = m.driver_id;
    RETURN NULL;
END;
$$;

CREATE TRIGGER applications_job_titles_moved AFTER UPDATE ON applications
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION move_job_title_profiles();
