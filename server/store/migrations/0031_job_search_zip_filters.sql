-- Job search: the ZIP index holds every column a filter tests, so that the
-- jobs of a radius that pass a search's filters are found from the index
-- alone, and only they are read from the table to have their words checked
-- (store.candidatesNear).
--
-- A job's words are the costliest of its checks: they are read from the
-- TOAST table. Searching words within 100 miles of 77002 with two filters
-- among 1,000,000 jobs read the 12,714 jobs of the radius from the table,
-- each with its words, to find the 1,940 that pass the filters and the 187
-- that hold the words: 62 ms. From this index, the 1,940 are found in 5 ms
-- (an index-only scan) and the whole statement took 27 ms.
--
-- The index grows from 73 MB to 186 MB over 1,000,000 jobs, mostly for the
-- route and employment types (arrays); building it took 2 s. The old one is
-- dropped only once its successor is built.
ALTER INDEX jobs_search_zip_idx RENAME TO jobs_search_zip_narrow_idx;

CREATE INDEX jobs_search_zip_idx ON jobs (left(postal_code, 5))
    INCLUDE (postal_code, created_at, id, account_id, state, freight_type, driver_type, pay_frequency,
             pay_amount_min, pay_amount_max, route_type, employment_type, license_class, twic_only)
    WHERE deleted_at IS NULL AND postal_code IS NOT NULL;

DROP INDEX jobs_search_zip_narrow_idx;
