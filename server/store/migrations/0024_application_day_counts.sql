-- Exact counts of a date range with the filters of few values. A range
-- alone is the sum of its days in application_counts (0015), and the
-- filters of few values together are sums in application_profile_counts
-- (0022); a range with them was counted in applications, from the index
-- of sent (0022) or of the most selective filter: at 1,000,000
-- applications, start_date=2026-11-02&driver_type=Company Driver&
-- has_job_apps=1 visited the 171,000 rows of the range to count 34,314,
-- 24-26 ms. This keeps the count of each UTC day's applications by state,
-- driver type and job applications: 55,356 rows for the demo's million
-- over 181 days, of which the range's 30 days are about 9,000, summed in
-- 1-4 ms. The days at either end of a range that are only partly in it
-- are counted in applications (sentRangeCount).
CREATE TABLE application_day_counts (
    account_id   bigint  NOT NULL,
    day          date    NOT NULL,
    state        text    NOT NULL,
    driver_type  text    NOT NULL,
    has_job_apps boolean NOT NULL,
    n            bigint  NOT NULL
);

CREATE INDEX application_day_counts_idx ON application_day_counts (account_id, day)
    INCLUDE (state, driver_type, has_job_apps, n);

-- The triggers count the days as well: migration 0022's function with a
-- fourth insert, the same in each branch.
CREATE OR REPLACE FUNCTION count_application_changes() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        WITH c AS (SELECT account_id, state, driver_type, has_job_apps, first_name_key, last_name_key,
                          experience_years, sent, endorsements, latitude, longitude, 1 AS n FROM new_rows),
        counted AS (INSERT INTO application_counts (account_id, dimension, value, n)
            SELECT c.account_id, k.dimension, k.value, sum(c.n)
              FROM c, application_count_keys(c.state, c.driver_type, c.has_job_apps, c.first_name_key,
                   c.last_name_key, c.experience_years, c.sent, c.endorsements) k
             GROUP BY 1, 2, 3 HAVING sum(c.n) <> 0),
        profiled AS (INSERT INTO application_profile_counts
                         (account_id, state, driver_type, has_job_apps, experience_halves, endorsements, n)
            SELECT account_id, state, driver_type, has_job_apps,
                   coalesce(CASE WHEN experience_years IS NOT NULL
                                 THEN least(floor(experience_years * 2), 1000)::integer END, -1), endorsement_bits(endorsements), sum(n)
              FROM c GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(n) <> 0),
        dated AS (INSERT INTO application_day_counts (account_id, day, state, driver_type, has_job_apps, n)
            SELECT account_id, (sent AT TIME ZONE 'UTC')::date, state, driver_type, has_job_apps, sum(n)
              FROM c GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0)
        INSERT INTO application_location_counts (account_id, latitude, longitude, n)
        SELECT account_id, latitude, longitude, sum(n) FROM c WHERE latitude IS NOT NULL AND longitude IS NOT NULL
         GROUP BY 1, 2, 3 HAVING sum(n) <> 0;
    ELSIF TG_OP = 'DELETE' THEN
        WITH c AS (SELECT account_id, state, driver_type, has_job_apps, first_name_key, last_name_key,
                          experience_years, sent, endorsements, latitude, longitude, -1 AS n FROM old_rows),
        counted AS (INSERT INTO application_counts (account_id, dimension, value, n)
            SELECT c.account_id, k.dimension, k.value, sum(c.n)
              FROM c, application_count_keys(c.state, c.driver_type, c.has_job_apps, c.first_name_key,
                   c.last_name_key, c.experience_years, c.sent, c.endorsements) k
             GROUP BY 1, 2, 3 HAVING sum(c.n) <> 0),
        profiled AS (INSERT INTO application_profile_counts
                         (account_id, state, driver_type, has_job_apps, experience_halves, endorsements, n)
            SELECT account_id, state, driver_type, has_job_apps,
                   coalesce(CASE WHEN experience_years IS NOT NULL
                                 THEN least(floor(experience_years * 2), 1000)::integer END, -1), endorsement_bits(endorsements), sum(n)
              FROM c GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(n) <> 0),
        dated AS (INSERT INTO application_day_counts (account_id, day, state, driver_type, has_job_apps, n)
            SELECT account_id, (sent AT TIME ZONE 'UTC')::date, state, driver_type, has_job_apps, sum(n)
              FROM c GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0)
        INSERT INTO application_location_counts (account_id, latitude, longitude, n)
        SELECT account_id, latitude, longitude, sum(n) FROM c WHERE latitude IS NOT NULL AND longitude IS NOT NULL
         GROUP BY 1, 2, 3 HAVING sum(n) <> 0;
    ELSE
        WITH c AS (SELECT account_id, state, driver_type, has_job_apps, first_name_key, last_name_key,
                          experience_years, sent, endorsements, latitude, longitude, 1 AS n FROM new_rows
                   UNION ALL SELECT account_id, state, driver_type, has_job_apps, first_name_key, last_name_key,
                             experience_years, sent, endorsements, latitude, longitude, -1 FROM old_rows),
        counted AS (INSERT INTO application_counts (account_id, dimension, value, n)
            SELECT c.account_id, k.dimension, k.value, sum(c.n)
              FROM c, application_count_keys(c.state, c.driver_type, c.has_job_apps, c.first_name_key,
                   c.last_name_key, c.experience_years, c.sent, c.endorsements) k
             GROUP BY 1, 2, 3 HAVING sum(c.n) <> 0),
        profiled AS (INSERT INTO application_profile_counts
                         (account_id, state, driver_type, has_job_apps, experience_halves, endorsements, n)
            SELECT account_id, state, driver_type, has_job_apps,
                   coalesce(CASE WHEN experience_years IS NOT NULL
                                 THEN least(floor(experience_years * 2), 1000)::integer END, -1), endorsement_bits(endorsements), sum(n)
              FROM c GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(n) <> 0),
        dated AS (INSERT INTO application_day_counts (account_id, day, state, driver_type, has_job_apps, n)
            SELECT account_id, (sent AT TIME ZONE 'UTC')::date, state, driver_type, has_job_apps, sum(n)
              FROM c GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0)
        INSERT INTO application_location_counts (account_id, latitude, longitude, n)
        SELECT account_id, latitude, longitude, sum(n) FROM c WHERE latitude IS NOT NULL AND longitude IS NOT NULL
         GROUP BY 1, 2, 3 HAVING sum(n) <> 0;
    END IF;
    RETURN NULL;
END;
$$;

-- Every account's counts are filled again, one account a transaction
-- (countbackfill.go, which fills the days too).
CREATE TABLE IF NOT EXISTS application_counts_backfill (account_id bigint PRIMARY KEY);

INSERT INTO application_counts_backfill (account_id) SELECT id FROM accounts ON CONFLICT DO NOTHING;
