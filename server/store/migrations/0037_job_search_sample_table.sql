-- Job search's samples in a table of their own. The samples of migration
-- 0029 were partial indexes on jobs: a sample's matches were found in its
-- index and then read from jobs, one table page each, since a job's row
-- (its description inline, about 2.8 KB) leaves six to a page and a
-- sample's jobs are spread over all of them. At 1,000,000 jobs the table
-- is 1.3 GB and shared buffers 128 MB, so most of those pages came from
-- the system's cache: the 11,263 jobs of 33 small states under a common
-- word in the sample of 1 in 16 took 67 ms, and the 5,388 of
-- 'hazmat & tanker' 12 ms when every page was already in shared buffers.
--
-- job_search_sample holds the active jobs of the sample of 1 in 16 (the
-- samples of 1 in 64 and 256 are within it), with the columns a search
-- filters on and nothing else. Words of over 2 KB (PostgreSQL's TOAST
-- threshold: a description of a hundred words or more) are kept out of the
-- row (toast_tuple_target), the filters in it (STORAGE MAIN): a row is
-- some 180 bytes, the table 11 MB at a million jobs, and a sample's read
-- stays in shared buffers. The words are read only by a check the index
-- cannot answer alone (a phrase, a weight); a count by the words' index
-- reads the row's filters. Shorter words stay in their row. Measured
-- at 1,000,000 jobs: every match of 'driver' in the sample (61,342 jobs)
-- in 13 ms, the count of 'hazmat & tanker' 10 ms against 44 ms from jobs.
--
-- A sample of 1 in 8, new here, estimates a match of 12,800 jobs or more
-- (1,600 in it) where the others left it to be counted over every job:
-- 107 ms for the 16,554 jobs of a freight in two states, whose 1,001 in
-- the sample of 1 in 16 were too few. It is read only for such a match,
-- as the sample of 1 in 16 (this table) and the other half, read from jobs
-- by partial indexes of its own: some 1,600 jobs. A table of the whole
-- sample of 1 in 8 read the sample of 1 in 16 from twice the pages: 148 ms
-- for the matches of a common word, against 44 ms from this one, in shared
-- buffers of 128 MB beside the jobs'. job_facet_counts counts its jobs.
--
-- Triggers on jobs keep this table, in the writing statement, so a
-- search's estimates follow every answered write as its exact counts do.
-- Writers wait for this migration from its first statement, so none is
-- kept by the old function of a job's keys and missed by the fill. The
-- lock is the one its DROP INDEX takes, so that no transaction that read
-- jobs before it can leave the migration waiting for a stronger one.
LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE;

CREATE TABLE job_search_sample (
    id              bigint PRIMARY KEY,
    account_id      bigint      NOT NULL,
    created_at      timestamptz NOT NULL,
    postal_code     text,
    state           text,
    freight_type    text,
    driver_type     text,
    pay_frequency   text,
    route_type      text[],
    employment_type text[],
    license_class   text,
    twic_only       boolean     NOT NULL,
    pay_amount_min  numeric,
    pay_amount_max  numeric,
    search_words    tsvector
) WITH (toast_tuple_target = 128);

-- Only the words leave the row: a filter out of it would be read from the
-- TOAST table by every check of it.
ALTER TABLE job_search_sample
    ALTER postal_code SET STORAGE MAIN, ALTER state SET STORAGE MAIN,
    ALTER freight_type SET STORAGE MAIN, ALTER driver_type SET STORAGE MAIN,
    ALTER pay_frequency SET STORAGE MAIN, ALTER route_type SET STORAGE MAIN,
    ALTER employment_type SET STORAGE MAIN, ALTER license_class SET STORAGE MAIN,
    ALTER pay_amount_min SET STORAGE MAIN, ALTER pay_amount_max SET STORAGE MAIN;

-- sample_job_search writes a statement's changed jobs of the sample into
-- job_search_sample: an active job's row, or its removal once deleted.
CREATE FUNCTION sample_job_search() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM job_search_sample s USING old_rows o WHERE s.id = o.id;
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        DELETE FROM job_search_sample s USING new_rows n
         WHERE s.id = n.id AND n.deleted_at IS NOT NULL AND (hashint8extended(n.id, 11) & 15) = 0;
    END IF;
    INSERT INTO job_search_sample AS s (id, account_id, created_at, postal_code, state, freight_type,
            driver_type, pay_frequency, route_type, employment_type, license_class, twic_only,
            pay_amount_min, pay_amount_max, search_words)
    SELECT n.id, n.account_id, n.created_at, n.postal_code, n.state, n.freight_type, n.driver_type,
           n.pay_frequency, n.route_type, n.employment_type, n.license_class, n.twic_only,
           n.pay_amount_min, n.pay_amount_max, n.search_words
      FROM new_rows n
     WHERE n.deleted_at IS NULL AND (hashint8extended(n.id, 11) & 15) = 0
    ON CONFLICT (id) DO UPDATE
       SET account_id = excluded.account_id, created_at = excluded.created_at,
           postal_code = excluded.postal_code, state = excluded.state,
           freight_type = excluded.freight_type, driver_type = excluded.driver_type,
           pay_frequency = excluded.pay_frequency, route_type = excluded.route_type,
           employment_type = excluded.employment_type, license_class = excluded.license_class,
           twic_only = excluded.twic_only, pay_amount_min = excluded.pay_amount_min,
           pay_amount_max = excluded.pay_amount_max, search_words = excluded.search_words
     WHERE (s.account_id, s.created_at, s.postal_code, s.state, s.freight_type, s.driver_type,
            s.pay_frequency, s.route_type, s.employment_type, s.license_class, s.twic_only,
            s.pay_amount_min, s.pay_amount_max, s.search_words)
           IS DISTINCT FROM
           (excluded.account_id, excluded.created_at, excluded.postal_code, excluded.state,
            excluded.freight_type, excluded.driver_type, excluded.pay_frequency, excluded.route_type,
            excluded.employment_type, excluded.license_class, excluded.twic_only,
            excluded.pay_amount_min, excluded.pay_amount_max, excluded.search_words);
    RETURN NULL;
END;
$$;

CREATE TRIGGER jobs_sampled_insert AFTER INSERT ON jobs
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION sample_job_search();
CREATE TRIGGER jobs_sampled_update AFTER UPDATE ON jobs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION sample_job_search();
CREATE TRIGGER jobs_sampled_delete AFTER DELETE ON jobs
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION sample_job_search();

INSERT INTO job_search_sample (id, account_id, created_at, postal_code, state, freight_type, driver_type,
        pay_frequency, route_type, employment_type, license_class, twic_only, pay_amount_min,
        pay_amount_max, search_words)
SELECT id, account_id, created_at, postal_code, state, freight_type, driver_type, pay_frequency,
       route_type, employment_type, license_class, twic_only, pay_amount_min, pay_amount_max, search_words
  FROM jobs
 WHERE deleted_at IS NULL AND (hashint8extended(id, 11) & 15) = 0;

-- Each sample's indexes, as migrations 0029 to 0031 made them on jobs:
-- its words with the filters beside them, its jobs newest first, and its
-- ZIP codes. The sample of 1 in 16 is the whole table; the other half of
-- the sample of 1 in 8 is indexed on jobs.
CREATE INDEX job_search_sample16_match_idx ON job_search_sample
    USING gin (search_words, state, freight_type, driver_type, pay_frequency, route_type, employment_type, account_id);
CREATE INDEX job_search_sample16_posted_idx ON job_search_sample (created_at DESC, id DESC);
CREATE INDEX job_search_sample16_zip_idx ON job_search_sample (left(postal_code, 5)) INCLUDE (postal_code)
    WHERE postal_code IS NOT NULL;

CREATE INDEX jobs_search_sample8_match_idx ON jobs
    USING gin (search_words, state, freight_type, driver_type, pay_frequency, route_type, employment_type, account_id)
    WHERE deleted_at IS NULL AND (hashint8extended(id, 11) & 15) = 8;
CREATE INDEX jobs_search_sample8_posted_idx ON jobs (created_at DESC, id DESC)
    WHERE deleted_at IS NULL AND (hashint8extended(id, 11) & 15) = 8;
CREATE INDEX jobs_search_sample8_zip_idx ON jobs (left(postal_code, 5)) INCLUDE (postal_code)
    WHERE deleted_at IS NULL AND postal_code IS NOT NULL AND (hashint8extended(id, 11) & 15) = 8;

CREATE INDEX job_search_sample64_match_idx ON job_search_sample
    USING gin (search_words, state, freight_type, driver_type, pay_frequency, route_type, employment_type, account_id)
    WHERE (hashint8extended(id, 11) & 63) = 0;
CREATE INDEX job_search_sample64_posted_idx ON job_search_sample (created_at DESC, id DESC)
    WHERE (hashint8extended(id, 11) & 63) = 0;
CREATE INDEX job_search_sample64_zip_idx ON job_search_sample (left(postal_code, 5)) INCLUDE (postal_code)
    WHERE postal_code IS NOT NULL AND (hashint8extended(id, 11) & 63) = 0;

CREATE INDEX job_search_sample256_match_idx ON job_search_sample
    USING gin (search_words, state, freight_type, driver_type, pay_frequency, route_type, employment_type, account_id)
    WHERE (hashint8extended(id, 11) & 255) = 0;
CREATE INDEX job_search_sample256_posted_idx ON job_search_sample (created_at DESC, id DESC)
    WHERE (hashint8extended(id, 11) & 255) = 0;
CREATE INDEX job_search_sample256_zip_idx ON job_search_sample (left(postal_code, 5)) INCLUDE (postal_code)
    WHERE postal_code IS NOT NULL AND (hashint8extended(id, 11) & 255) = 0;

-- The samples' indexes on jobs are no longer read, and each job written
-- tested their three predicates nine times.
DROP INDEX jobs_search_sample16_match_idx, jobs_search_sample16_posted_idx, jobs_search_sample16_zip_idx,
    jobs_search_sample64_match_idx, jobs_search_sample64_posted_idx, jobs_search_sample64_zip_idx,
    jobs_search_sample256_match_idx, jobs_search_sample256_posted_idx, jobs_search_sample256_zip_idx;

-- The keys of migration 0036, with the sample of 1 in 8, and its counts
-- of the jobs already stored.
CREATE OR REPLACE FUNCTION job_facet_keys(id bigint, driver_type text, freight_type text, route_type text[],
    employment_type text[], pay_frequency text, state text, license_class text)
RETURNS TABLE (sample smallint, facet text, value text)
LANGUAGE sql IMMUTABLE AS $$
    SELECT s.sample, k.facet, k.value
      FROM (SELECT 1::smallint
            UNION ALL SELECT 8 WHERE (hashint8extended(id, 11) & 7) = 0
            UNION ALL SELECT 16 WHERE (hashint8extended(id, 11) & 15) = 0
            UNION ALL SELECT 64 WHERE (hashint8extended(id, 11) & 63) = 0
            UNION ALL SELECT 256 WHERE (hashint8extended(id, 11) & 255) = 0) s (sample),
           (SELECT f.facet, f.value
              FROM (VALUES ('all', ''),
                           ('driver_type', driver_type),
                           ('freight_type', freight_type),
                           ('pay_frequency', pay_frequency),
                           ('state', state),
                           ('license_class', license_class)) f (facet, value)
             WHERE f.value IS NOT NULL
            UNION ALL SELECT 'route_type', unnest(route_type)
            UNION ALL SELECT 'employment_type', unnest(employment_type)) k
$$;

INSERT INTO job_facet_counts (account_id, sample, facet, value, n)
SELECT CASE WHEN grouping(j.account_id) = 1 THEN 0 ELSE j.account_id END, k.sample, k.facet, k.value, count(*)
  FROM jobs j,
       job_facet_keys(j.id, j.driver_type, j.freight_type, j.route_type, j.employment_type,
                      j.pay_frequency, j.state, j.license_class) k
 WHERE j.deleted_at IS NULL AND (hashint8extended(j.id, 11) & 7) = 0 AND k.sample = 8
 GROUP BY GROUPING SETS ((j.account_id, k.sample, k.facet, k.value), (k.sample, k.facet, k.value));

CREATE STATISTICS job_search_sample_zip_stats ON (left(postal_code, 5)) FROM job_search_sample;
ANALYZE job_search_sample;
