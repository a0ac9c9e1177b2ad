-- A radius listed in id order walks applications_list_idx and tests each
-- applicant's place (store.radiusWalks). That index did not carry the
-- place, so each row walked was read from the table as well: at 100,000
-- applications the walk was left to radii holding about a tenth of the
-- account or more (for a page of 100), and 50 miles around 07030 (5,178
-- applicants) read its box of the location index and sorted it, 1.2-1.6
-- ms a page. With the place in the index the walk reads the index alone:
-- 0.22-0.37 ms for the same page, about 1,930 entries.
--
-- The index is rebuilt in this migration's transaction, as 0035 rebuilt
-- it: writes to applications wait for it (seconds at a million
-- applications). The location index already carries both columns, so an
-- update that changes them was never HOT: carrying them here costs 16
-- bytes an entry, not more writes.
DROP INDEX applications_list_idx;
CREATE INDEX applications_list_idx ON applications (account_id, driver_id)
    INCLUDE (state, driver_type, has_job_apps, experience_halves, endorsements, sent, first_name_key, last_name_key, status,
             latitude, longitude);
