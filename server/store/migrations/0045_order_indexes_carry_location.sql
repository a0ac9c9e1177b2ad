-- A radius listed by name, by date sent or by driver type read its box
-- from the location index and sorted every match for a page: at 1,000,000
-- applications, 50 miles around 07030 with driver_type=Company Driver
-- (26,177 matches) took 15-19 ms a page by name, 15 ms by -sent, 22 ms by
-- driver type, warm, and the scale report's p99 by name was 26.0 ms. A
-- radius in id order walks applications_list_idx instead and tests each
-- applicant's place there (migration 0042, store.radiusWalks); these three
-- orders can be walked the same way once their indexes carry the place:
-- the same pages took 1.7 ms, 3.3 ms and 1.1 ms. The state order is not
-- walked (applicants near one another share their states), so its index
-- is left as it is.
--
-- The indexes are rebuilt in this migration's transaction, as 0042 rebuilt
-- the id order's: writes to applications wait for it (about 2.5 s an
-- index at a million applications). The location index already carries
-- both columns, so an update that changes them was never HOT: carrying
-- them here costs 16 bytes an entry, not more writes.
DROP INDEX applications_name_idx, applications_driver_type_idx, applications_sent_idx;

CREATE INDEX applications_name_idx ON applications (account_id, last_name_key, first_name_key, driver_id)
    INCLUDE (state, driver_type, has_job_apps, experience_halves, endorsements, sent, status, latitude, longitude);
CREATE INDEX applications_driver_type_idx ON applications (account_id, driver_type, driver_id)
    INCLUDE (state, has_job_apps, experience_halves, endorsements, sent, first_name_key, last_name_key, status,
             latitude, longitude);
CREATE INDEX applications_sent_idx ON applications (account_id, sent, driver_id)
    INCLUDE (state, driver_type, has_job_apps, experience_halves, endorsements, first_name_key, last_name_key, status,
             latitude, longitude);
