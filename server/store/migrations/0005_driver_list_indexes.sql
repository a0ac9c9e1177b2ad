-- Indexes for the drivers list at 100,000 applications per account: a
-- filter's count visits every match, so each filter alone should be answered
-- from an index, without reading the table.

-- Certifications: one partial index per code, in driver id order, so the
-- count is an index-only scan and the first page reads the index in order.
-- The GIN index on the array held both accounts' rows and needed the table
-- to tell them apart; the list was its only user.
CREATE INDEX applications_endorsement_t_idx ON applications (account_id, driver_id) WHERE endorsements @> '{T}'::text[];
CREATE INDEX applications_endorsement_h_idx ON applications (account_id, driver_id) WHERE endorsements @> '{H}'::text[];
CREATE INDEX applications_endorsement_n_idx ON applications (account_id, driver_id) WHERE endorsements @> '{N}'::text[];
CREATE INDEX applications_endorsement_x_idx ON applications (account_id, driver_id) WHERE endorsements @> '{X}'::text[];
DROP INDEX applications_endorsements_idx;

-- Radius: the bounding box with the columns of a page in id order, so both
-- the great-circle test and the page are answered from the index.
CREATE INDEX applications_location_page_idx ON applications (account_id, latitude, longitude)
    INCLUDE (driver_id, sent, has_job_apps);
DROP INDEX applications_location_idx;

-- Low-cardinality filters: without driver_id, equal keys are deduplicated
-- into one index tuple, which makes the index about ten times smaller and
-- its count about twice as fast. The (account_id, driver_type, driver_id)
-- index stays for sorting by driver type; has_job_apps is no sort key.
CREATE INDEX applications_driver_type_count_idx ON applications (account_id, driver_type);
CREATE INDEX applications_has_job_apps_count_idx ON applications (account_id, has_job_apps);
DROP INDEX applications_has_job_apps_idx;

-- Job title: the applicants of the title's jobs, read from the index alone.
CREATE INDEX job_applications_job_driver_idx ON job_applications (job_id) INCLUDE (account_id, driver_id);
DROP INDEX job_applications_job_idx;

-- Minimum experience: numeric keys are never deduplicated, so a count of
-- most of an account read one index tuple per application. The filter's
-- values are whole or half years, so it compares whole half-years instead,
-- an integer the index deduplicates. The cap, far above the 99 years the
-- intake accepts, keeps an absurd value from failing a write. Adding a
-- stored column rewrites applications once, under an exclusive lock.
ALTER TABLE applications ADD COLUMN experience_halves integer
    GENERATED ALWAYS AS (least(floor(experience_years * 2), 1000)::integer) STORED;
CREATE INDEX applications_experience_halves_idx ON applications (account_id, experience_halves);
DROP INDEX applications_experience_idx;
