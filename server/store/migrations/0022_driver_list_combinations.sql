-- The drivers list with two or three filters at a million applications of
-- one account. Each filter alone was answered from an index; together they
-- were not: state=TX&driver_type=Owner Operator counted its 13,129 matches
-- by reading the 53,094 rows of the state from the table (30,000 pages,
-- 0.7-1 s when they were not cached), and its first page by name walked
-- the name index and read 7,900 rows of the table to keep 100.
--
-- The indexes made again below go first, so that the rewrite of
-- applications in 1. does not build them as well.
DROP INDEX applications_name_idx, applications_first_name_idx, applications_state_idx,
    applications_driver_type_idx, applications_driver_type_count_idx, applications_sent_idx,
    applications_location_page_idx;

-- 1. Unknown experience (NULL experience_years) was experience_halves
--    1000, not NULL: least() skips NULLs. min_experience listed those
--    drivers as if they had 500 years, and application_counts counted
--    them so. The column is made again (a rewrite of applications under an
--    exclusive lock, as when migration 0005 added it; its index goes with
--    it), and the counts are filled again below.
DROP INDEX applications_experience_halves_idx;
ALTER TABLE applications DROP COLUMN experience_halves;
ALTER TABLE applications ADD COLUMN experience_halves integer
    GENERATED ALWAYS AS (CASE WHEN experience_years IS NOT NULL
                              THEN least(floor(experience_years * 2), 1000)::integer END) STORED;
CREATE INDEX applications_experience_halves_idx ON applications (account_id, experience_halves);

CREATE OR REPLACE FUNCTION application_count_keys(state text, driver_type text, has_job_apps boolean,
    first_name_key text, last_name_key text, experience_years numeric, sent timestamptz, endorsements text[])
RETURNS TABLE (dimension text, value text)
LANGUAGE sql IMMUTABLE AS $$
    SELECT k.dimension, k.value
      FROM (VALUES ('all', ''),
                   ('state', state),
                   ('driver_type', driver_type),
                   ('has_job_apps', has_job_apps::text),
                   ('first_name_key', first_name_key),
                   ('last_name_key', last_name_key),
                   ('experience_halves', lpad((CASE WHEN experience_years IS NOT NULL
                                                  THEN least(floor(experience_years * 2), 1000)::integer END)::text, 4, '0')),
                   ('sent', lpad(to_char(sent AT TIME ZONE 'UTC', 'J'), 10, '0'))) k (dimension, value)
     WHERE k.value IS NOT NULL
    UNION ALL
    SELECT 'endorsements', e FROM (SELECT DISTINCT unnest(endorsements)) u (e)
$$;

-- 2. The list's indexes carry every column a filter tests, so any
--    combination is tested in the index the plan walks (a sort order's, or
--    the most selective filter's) without the table: an index-only scan,
--    once VACUUM has marked the pages all-visible (analyze.go). Those are
--    the columns the filters test but the radius, whose index leads with
--    the place, and e-mail and phone, whose matches are a handful.

-- In id order, the default sort: the primary key cannot include columns.
CREATE INDEX applications_list_idx ON applications (account_id, driver_id)
    INCLUDE (state, driver_type, has_job_apps, experience_halves, endorsements, sent, first_name_key, last_name_key);
CREATE INDEX applications_name_idx ON applications (account_id, last_name_key, first_name_key, driver_id)
    INCLUDE (state, driver_type, has_job_apps, experience_halves, endorsements, sent);
CREATE INDEX applications_first_name_idx ON applications (account_id, first_name_key, driver_id)
    INCLUDE (state, driver_type, has_job_apps, experience_halves, endorsements, sent, last_name_key);
CREATE INDEX applications_state_idx ON applications (account_id, state, driver_id)
    INCLUDE (driver_type, has_job_apps, experience_halves, endorsements, sent, first_name_key, last_name_key);
CREATE INDEX applications_driver_type_idx ON applications (account_id, driver_type, driver_id)
    INCLUDE (state, has_job_apps, experience_halves, endorsements, sent, first_name_key, last_name_key);
CREATE INDEX applications_sent_idx ON applications (account_id, sent, driver_id)
    INCLUDE (state, driver_type, has_job_apps, experience_halves, endorsements, first_name_key, last_name_key);
CREATE INDEX applications_location_page_idx ON applications (account_id, latitude, longitude)
    INCLUDE (driver_id, sent, has_job_apps, state, driver_type, experience_halves, endorsements,
             first_name_key, last_name_key);

-- 3. Exact counts of the combinations of the filters with few values, which
--    can match most of an account (driver_type=Company Driver&has_job_apps=0
--    is a third of it: an index-only count still visits each match). As
--    application_counts keeps one value's count (migration 0015), this
--    keeps the count of each combination of state, driver type, job
--    applications, whole half-years of experience (-1 unknown) and the set
--    of certifications (a bit each: T 1, H 2, N 4, X 8). A combination of
--    those filters is the sum of the combinations it matches: at a million
--    applications the demo's account has 33,763 of them.
CREATE TABLE application_profile_counts (
    account_id        bigint   NOT NULL,
    state             text     NOT NULL,
    driver_type       text     NOT NULL,
    has_job_apps      boolean  NOT NULL,
    experience_halves integer  NOT NULL,
    endorsements      smallint NOT NULL,
    n                 bigint   NOT NULL
);

CREATE INDEX application_profile_counts_idx ON application_profile_counts
    (account_id, state, driver_type, has_job_apps, experience_halves, endorsements) INCLUDE (n);

-- The certifications the list filters by, as the bits of
-- application_profile_counts.endorsements; other codes are not counted.
CREATE FUNCTION endorsement_bits(endorsements text[]) RETURNS smallint
LANGUAGE sql IMMUTABLE AS $$
    -- (| and << bind alike, left to right: each shift is parenthesized.)
    SELECT ((endorsements @> '{T}')::int | ((endorsements @> '{H}')::int << 1) |
            ((endorsements @> '{N}')::int << 2) | ((endorsements @> '{X}')::int << 3))::smallint
$$;

-- The statement-level triggers of migration 0015 count the combinations
-- as well: one row per combination a statement changed, folded with the
-- others (Store.CompactApplicationCounts).
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
              FROM c GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(n) <> 0)
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
              FROM c GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(n) <> 0)
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
              FROM c GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(n) <> 0)
        INSERT INTO application_location_counts (account_id, latitude, longitude, n)
        SELECT account_id, latitude, longitude, sum(n) FROM c WHERE latitude IS NOT NULL AND longitude IS NOT NULL
         GROUP BY 1, 2, 3 HAVING sum(n) <> 0;
    END IF;
    RETURN NULL;
END;
$$;

-- Every account's counts are filled again after this migration, one
-- account a transaction, as after migration 0015 (countbackfill.go), which
-- now fills the combinations too.
-- (The list of migration 0015 may still be there, when its fill stopped
-- part-way.)
CREATE TABLE IF NOT EXISTS application_counts_backfill (account_id bigint PRIMARY KEY);

INSERT INTO application_counts_backfill (account_id) SELECT id FROM accounts ON CONFLICT DO NOTHING;
