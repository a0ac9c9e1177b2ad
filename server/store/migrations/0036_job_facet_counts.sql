-- Job search's facets at a million jobs. A facet counts the match without
-- its own filter; with no other filter and no words, that is every active
-- job, and counting them read the whole table: 640 ms a facet at
-- 1,000,000 jobs, and the values too rare for the samples of migration
-- 0029 to estimate were counted that way even under words (1.9 s for
-- three facets of every job, 8 s under a common word).
--
-- So the active jobs are counted here by facet value, by triggers on jobs,
-- in the writing statement's transaction, as migration 0015 counts the
-- applications: each statement inserts its changes as new rows (a
-- statement's jobs +1, the jobs it removed or deleted -1), and the fold
-- loop folds an account's rows into one per value. A count is the sum of
-- its rows.
--
-- sample is 1 for every active job, and 16, 64 or 256 for those of each
-- of migration 0029's samples: a search for words estimates a value's
-- matches as the value's jobs times the share of its jobs in a sample that
-- match, which needs how many of the sample's jobs hold the value.
--
-- Each statement writes its rows twice: under its account, for searches
-- of a few accounts, and under account 0 (no account has that id), so a
-- search of every account sums a few rows rather than a row per account.
-- facet is the column ('all' with value '' counts the jobs themselves).
CREATE TABLE job_facet_counts (
    account_id bigint   NOT NULL,
    sample     smallint NOT NULL,
    facet      text     NOT NULL,
    value      text COLLATE "C" NOT NULL,
    n          bigint   NOT NULL
);

CREATE INDEX job_facet_counts_idx ON job_facet_counts (account_id, facet, sample, value) INCLUDE (n);

-- The (sample, facet, value) keys a job counts under. A transition table's
-- rows have no named type, so the columns come one by one. The samples'
-- predicates are migration 0029's.
CREATE FUNCTION job_facet_keys(id bigint, driver_type text, freight_type text, route_type text[],
    employment_type text[], pay_frequency text, state text, license_class text)
RETURNS TABLE (sample smallint, facet text, value text)
LANGUAGE sql IMMUTABLE AS $$
    SELECT s.sample, k.facet, k.value
      FROM (SELECT 1::smallint
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

-- One statement per trigger: the active jobs a statement added count +1,
-- the active jobs it removed -1 (an update both, so a job deleted or
-- brought back moves out of or into every count); values whose changes
-- cancel out write nothing. Each job's keys are grouped once, by account
-- and for every account (grouping sets), and an update counts only the
-- jobs whose counted fields moved: a post that changes 1,000 jobs' titles
-- or pay reads their keys for none of them.
CREATE FUNCTION count_job_facets() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO job_facet_counts (account_id, sample, facet, value, n)
        SELECT CASE WHEN grouping(j.account_id) = 1 THEN 0 ELSE j.account_id END, k.sample, k.facet, k.value, count(*)
          FROM new_rows j,
               job_facet_keys(j.id, j.driver_type, j.freight_type, j.route_type, j.employment_type,
                              j.pay_frequency, j.state, j.license_class) k
         WHERE j.deleted_at IS NULL
         GROUP BY GROUPING SETS ((j.account_id, k.sample, k.facet, k.value), (k.sample, k.facet, k.value));
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO job_facet_counts (account_id, sample, facet, value, n)
        SELECT CASE WHEN grouping(j.account_id) = 1 THEN 0 ELSE j.account_id END, k.sample, k.facet, k.value, -count(*)
          FROM old_rows j,
               job_facet_keys(j.id, j.driver_type, j.freight_type, j.route_type, j.employment_type,
                              j.pay_frequency, j.state, j.license_class) k
         WHERE j.deleted_at IS NULL
         GROUP BY GROUPING SETS ((j.account_id, k.sample, k.facet, k.value), (k.sample, k.facet, k.value));
    ELSE
        WITH moved AS (
            SELECT o.id FROM old_rows o JOIN new_rows n ON n.id = o.id
             WHERE (o.account_id, o.driver_type, o.freight_type, o.route_type, o.employment_type,
                    o.pay_frequency, o.state, o.license_class, o.deleted_at IS NULL)
                   IS DISTINCT FROM
                   (n.account_id, n.driver_type, n.freight_type, n.route_type, n.employment_type,
                    n.pay_frequency, n.state, n.license_class, n.deleted_at IS NULL)),
        c AS (
            SELECT id, account_id, driver_type, freight_type, route_type, employment_type,
                   pay_frequency, state, license_class, 1 AS n
              FROM new_rows WHERE deleted_at IS NULL AND id IN (SELECT id FROM moved)
            UNION ALL
            SELECT id, account_id, driver_type, freight_type, route_type, employment_type,
                   pay_frequency, state, license_class, -1
              FROM old_rows WHERE deleted_at IS NULL AND id IN (SELECT id FROM moved))
        INSERT INTO job_facet_counts (account_id, sample, facet, value, n)
        SELECT CASE WHEN grouping(c.account_id) = 1 THEN 0 ELSE c.account_id END, k.sample, k.facet, k.value, sum(c.n)
          FROM c,
               job_facet_keys(c.id, c.driver_type, c.freight_type, c.route_type, c.employment_type,
                              c.pay_frequency, c.state, c.license_class) k
         GROUP BY GROUPING SETS ((c.account_id, k.sample, k.facet, k.value), (k.sample, k.facet, k.value))
        HAVING sum(c.n) <> 0;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER jobs_facets_counted_insert AFTER INSERT ON jobs
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION count_job_facets();
CREATE TRIGGER jobs_facets_counted_update AFTER UPDATE ON jobs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION count_job_facets();
CREATE TRIGGER jobs_facets_counted_delete AFTER DELETE ON jobs
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION count_job_facets();

-- The jobs stored before this migration, counted in its transaction: the
-- triggers above hold the jobs table's writers off until it commits, so
-- no write is counted twice or missed. (At 1,000,000 jobs this is one
-- pass over the table; jobs are bounded per account, unlike applications,
-- whose counts migration 0015 filled one account at a time.)
INSERT INTO job_facet_counts (account_id, sample, facet, value, n)
SELECT CASE WHEN grouping(j.account_id) = 1 THEN 0 ELSE j.account_id END, k.sample, k.facet, k.value, count(*)
  FROM jobs j,
       job_facet_keys(j.id, j.driver_type, j.freight_type, j.route_type, j.employment_type,
                      j.pay_frequency, j.state, j.license_class) k
 WHERE j.deleted_at IS NULL
 GROUP BY GROUPING SETS ((j.account_id, k.sample, k.facet, k.value), (k.sample, k.facet, k.value));
