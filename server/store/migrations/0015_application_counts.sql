-- Exact counts of the drivers list at a million applications per account.
-- A count(*) visits every match: half a second for half a million. For the
-- filters with few values (or one value per row: a name, a day), the count
-- of each value is kept here instead, by triggers on applications, so every
-- statement that writes applications (intake, CLI import, demo seed,
-- cascading deletes) keeps them exact in its own transaction.
--
-- Each statement inserts its changes as new rows, one per (dimension,
-- value) it changed, instead of updating one row per value: concurrent
-- intakes of the same account then never wait on each other's row lock. A
-- count is the sum of its rows; Store.CompactApplicationCounts folds an
-- account's rows into one per value from time to time.
--
-- dimension names the applications column (or 'all' for the account's
-- total, 'sent' for the UTC day of sent as a Julian day number).
-- Numeric values are zero-padded to a fixed width and the column compares
-- bytes, so ranges of days and of experience are ranges of value.
CREATE TABLE application_counts (
    account_id bigint NOT NULL,
    dimension  text   NOT NULL,
    value      text COLLATE "C" NOT NULL,
    n          bigint NOT NULL
);

CREATE INDEX application_counts_idx ON application_counts (account_id, dimension, value) INCLUDE (n);

-- The same for the home centroid, which the radius filter tests: an
-- account's applicants live at a few thousand centroids at most, so a
-- radius count tests each centroid in the box once instead of each
-- applicant. Applicants of an unknown ZIP (no centroid) are not counted.
CREATE TABLE application_location_counts (
    account_id bigint           NOT NULL,
    latitude   double precision NOT NULL,
    longitude  double precision NOT NULL,
    n          bigint           NOT NULL
);

CREATE INDEX application_location_counts_idx ON application_location_counts (account_id, latitude, longitude) INCLUDE (n);

-- The (dimension, value) pairs an application row counts under.
-- Endorsements count once per distinct code, as the list's @> test does.
-- (A transition table's rows have no named type: the columns come one by
-- one. Experience comes as years, the halves computed as migration 0005's
-- generated column does: an update's old rows do not carry that column's
-- value.)
CREATE FUNCTION application_count_keys(state text, driver_type text, has_job_apps boolean,
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
                   ('experience_halves', lpad(least(floor(experience_years * 2), 1000)::integer::text, 4, '0')),
                   ('sent', lpad(to_char(sent AT TIME ZONE 'UTC', 'J'), 10, '0'))) k (dimension, value)
     WHERE k.value IS NOT NULL
    UNION ALL
    SELECT 'endorsements', e FROM (SELECT DISTINCT unnest(endorsements)) u (e)
$$;

-- One statement per trigger: the rows a statement added count +1, the rows
-- it removed -1, an update both; values whose changes cancel out (an
-- update that moved nothing) write nothing.
CREATE FUNCTION count_application_changes() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        WITH c AS (SELECT account_id, state, driver_type, has_job_apps, first_name_key, last_name_key,
                          experience_years, sent, endorsements, latitude, longitude, 1 AS n FROM new_rows),
        counted AS (INSERT INTO application_counts (account_id, dimension, value, n)
            SELECT c.account_id, k.dimension, k.value, sum(c.n)
              FROM c, application_count_keys(c.state, c.driver_type, c.has_job_apps, c.first_name_key,
                   c.last_name_key, c.experience_years, c.sent, c.endorsements) k
             GROUP BY 1, 2, 3 HAVING sum(c.n) <> 0)
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
             GROUP BY 1, 2, 3 HAVING sum(c.n) <> 0)
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
             GROUP BY 1, 2, 3 HAVING sum(c.n) <> 0)
        INSERT INTO application_location_counts (account_id, latitude, longitude, n)
        SELECT account_id, latitude, longitude, sum(n) FROM c WHERE latitude IS NOT NULL AND longitude IS NOT NULL
         GROUP BY 1, 2, 3 HAVING sum(n) <> 0;
    END IF;
    RETURN NULL;
END;
$$;

-- A trigger with transition tables takes one event each.
CREATE TRIGGER applications_counted_insert AFTER INSERT ON applications
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION count_application_changes();
CREATE TRIGGER applications_counted_update AFTER UPDATE ON applications
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION count_application_changes();
CREATE TRIGGER applications_counted_delete AFTER DELETE ON applications
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION count_application_changes();

-- The applications already stored are counted after this migration, one
-- account at a time, each in a transaction of its own that takes no lock
-- on applications (Store.Migrate, countbackfill.go): writes wait only for
-- this short transaction (the triggers' lock), not for the counting. The
-- triggers count every write from here on; the accounts listed here are
-- those that may hold applications written before. An account created
-- after this commits has only counted writes.
CREATE TABLE application_counts_backfill (account_id bigint PRIMARY KEY);

INSERT INTO application_counts_backfill (account_id) SELECT id FROM accounts;
