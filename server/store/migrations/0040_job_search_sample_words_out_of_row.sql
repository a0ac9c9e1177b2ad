-- The words of job_search_sample out of its rows, as migration 0037 meant
-- them to be. Its trigger copied a job's words from the statement's
-- transition table, which holds the row as written, before TOAST; and
-- PostgreSQL toasts only a row of over 2 KB (TOAST_TUPLE_THRESHOLD), what
-- ever toast_tuple_target says. A sampled job's row, its words included,
-- is under that (1.8 KB, 1.6 KB of it words, for the generated jobs of the
-- search benchmark), so the trigger's rows kept their words: at 1,000,000
-- jobs the table was 96 MB, not the 13 MB that 0037's own fill made, and
-- the sample's reads left shared buffers. Every match of 'driver' in the
-- sample, with the counts of three facets, took 49 ms there against 24 ms
-- from the same rows written from jobs; the count of 'hazmat & tanker'
-- 7.3 ms against 3.2 ms.
--
-- Read from jobs instead, the words come as jobs keeps them: out of its
-- row once the row is over 2 KB, as a job's with its description is. A
-- value held out of line makes the sample's row toasted too, to its own
-- target of 128 bytes, so the words move to the sample's TOAST table.
-- Words short enough to stay in a job's row stay in the sample's, as 0037
-- meant.
--
-- The table is filled again from jobs, which rewrites its rows narrow.
-- Writers wait from the first statement (their triggers write this table);
-- readers do not. At a million jobs the fill reads jobs whole (8 s).
LOCK TABLE jobs IN SHARE MODE;

CREATE OR REPLACE FUNCTION sample_job_search() RETURNS trigger
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
    -- The words from jobs itself, not from new_rows: see above.
    INSERT INTO job_search_sample AS s (id, account_id, created_at, postal_code, state, freight_type,
            driver_type, pay_frequency, route_type, employment_type, license_class, twic_only,
            pay_amount_min, pay_amount_max, search_words)
    SELECT n.id, n.account_id, n.created_at, n.postal_code, n.state, n.freight_type, n.driver_type,
           n.pay_frequency, n.route_type, n.employment_type, n.license_class, n.twic_only,
           n.pay_amount_min, n.pay_amount_max, j.search_words
      FROM new_rows n
      JOIN jobs j ON j.id = n.id
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

TRUNCATE job_search_sample;
INSERT INTO job_search_sample (id, account_id, created_at, postal_code, state, freight_type, driver_type,
        pay_frequency, route_type, employment_type, license_class, twic_only, pay_amount_min,
        pay_amount_max, search_words)
SELECT id, account_id, created_at, postal_code, state, freight_type, driver_type, pay_frequency,
       route_type, employment_type, license_class, twic_only, pay_amount_min, pay_amount_max, search_words
  FROM jobs
 WHERE deleted_at IS NULL AND (hashint8extended(id, 11) & 15) = 0;
