-- A radius with driver_type or has_job_apps was counted in applications,
-- from the location index (0025), which holds the box's every entry: at
-- 1,000,000 applications, 50 miles around 07030 with driver_type=Company
-- Driver read the box's 52,353 entries to count 26,224, 7-8 ms beside the
-- page's 10 ms on two cores. The radius alone is the sum of the centroids
-- within it in application_location_counts (0015); this keeps the same
-- sums by driver type and job applications as well, a few rows a centroid
-- (342 for the demo's million, at 57 centroids), so the count reads only
-- those. application_location_counts stays: the radius alone reads its
-- fewer rows, and replicas of the previous version read it during an
-- upgrade.
CREATE TABLE application_location_profile_counts (
    account_id   bigint           NOT NULL,
    latitude     double precision NOT NULL,
    longitude    double precision NOT NULL,
    driver_type  text             NOT NULL,
    has_job_apps boolean          NOT NULL,
    n            bigint           NOT NULL
);

CREATE INDEX application_location_profile_counts_idx ON application_location_profile_counts
    (account_id, latitude, longitude) INCLUDE (driver_type, has_job_apps, n);

-- The triggers count them as well: migration 0024's function with a fifth
-- insert, the same in each branch.
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
              FROM c GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0),
        located AS (INSERT INTO application_location_counts (account_id, latitude, longitude, n)
            SELECT account_id, latitude, longitude, sum(n) FROM c WHERE latitude IS NOT NULL AND longitude IS NOT NULL
             GROUP BY 1, 2, 3 HAVING sum(n) <> 0)
        INSERT INTO application_location_profile_counts (account_id, latitude, longitude, driver_type, has_job_apps, n)
        SELECT account_id, latitude, longitude, driver_type, has_job_apps, sum(n)
          FROM c WHERE latitude IS NOT NULL AND longitude IS NOT NULL
         GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0;
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
              FROM c GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0),
        located AS (INSERT INTO application_location_counts (account_id, latitude, longitude, n)
            SELECT account_id, latitude, longitude, sum(n) FROM c WHERE latitude IS NOT NULL AND longitude IS NOT NULL
             GROUP BY 1, 2, 3 HAVING sum(n) <> 0)
        INSERT INTO application_location_profile_counts (account_id, latitude, longitude, driver_type, has_job_apps, n)
        SELECT account_id, latitude, longitude, driver_type, has_job_apps, sum(n)
          FROM c WHERE latitude IS NOT NULL AND longitude IS NOT NULL
         GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0;
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
              FROM c GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0),
        located AS (INSERT INTO application_location_counts (account_id, latitude, longitude, n)
            SELECT account_id, latitude, longitude, sum(n) FROM c WHERE latitude IS NOT NULL AND longitude IS NOT NULL
             GROUP BY 1, 2, 3 HAVING sum(n) <> 0)
        INSERT INTO application_location_profile_counts (account_id, latitude, longitude, driver_type, has_job_apps, n)
        SELECT account_id, latitude, longitude, driver_type, has_job_apps, sum(n)
          FROM c WHERE latitude IS NOT NULL AND longitude IS NOT NULL
         GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0;
    END IF;
    RETURN NULL;
END;
$$;

-- Every account's counts are filled again, one account a transaction
-- (countbackfill.go, which fills these too).
CREATE TABLE IF NOT EXISTS application_counts_backfill (account_id bigint PRIMARY KEY);

INSERT INTO application_counts_backfill (account_id) SELECT id FROM accounts ON CONFLICT DO NOTHING;
