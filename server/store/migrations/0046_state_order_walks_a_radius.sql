-- A radius listed in state order read its box from the location index and
-- sorted every match for a page, or, for a wide radius, walked
-- applications_state_idx from the first state, reading every applicant's
-- row for the place the index did not carry. At 1,000,000 applications,
-- 50 miles around 07030 with driver_type=Company Driver (26,177 matches)
-- took 21.4 ms at the median and 31.0 ms at p99 in the scale report; 250
-- miles around it, 394 ms. The other orders walk their index since
-- migration 0045; this one cannot, as neighbours share their states. It is
-- read a state at a time instead (store.radiusByStatePage): a probe of
-- each state's part of the box, on the new index below, then either that
-- part sorted (a few matches) or the state walked in id order on
-- applications_state_idx, which now carries the places, until the page
-- is full. The same pages: 6.6 ms and 5.5 ms.
--
-- The state index is rebuilt and the new one built in this migration's
-- transaction, as 0045 rebuilt its indexes: writes to applications wait
-- for it (about 2 s an index at a million applications). The location
-- columns were already indexed, so an update that changes them was never
-- HOT: the new index costs its entries, not more writes.
DROP INDEX applications_state_idx;

CREATE INDEX applications_state_idx ON applications (account_id, state, driver_id)
    INCLUDE (driver_type, has_job_apps, experience_halves, endorsements, sent, first_name_key, last_name_key, status,
             latitude, longitude);
CREATE INDEX applications_state_location_idx ON applications (account_id, state, (floor(latitude * 4)::integer), longitude)
    INCLUDE (latitude, driver_id, sent, has_job_apps, driver_type);
