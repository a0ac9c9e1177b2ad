-- The status filter with another filter (docs/api.md, Lead status) is
-- counted in applications, from the index of the most selective filter,
-- as migration 0022 counts every combination the count tables do not
-- hold: each list index carries the columns the other filters test, so
-- the count reads the index alone. Those indexes did not carry status, so
-- status=new&state=TX read the heap of every TX applicant: 246 ms for
-- 52,767 of them at 1,000,000 applications, cold, where state alone with
-- any other filter reads its index in a few milliseconds. Each list index
-- now carries status, and the status index carries the others, so a
-- status that is the most selective filter is read the same way.
--
-- A change of status already writes a new entry in every index (status is
-- an indexed column, so its updates are never HOT): carrying it costs the
-- entries' bytes, not more writes. The indexes are rebuilt in this
-- migration's transaction, as 0022 rebuilt them; writes to applications
-- wait for it (seconds at a million applications).
DROP INDEX applications_list_idx, applications_name_idx, applications_first_name_idx, applications_state_idx,
    applications_driver_type_idx, applications_sent_idx, applications_location_page_idx, applications_status_idx;

CREATE INDEX applications_list_idx ON applications (account_id, driver_id)
    INCLUDE (state, driver_type, has_job_apps, experience_halves, endorsements, sent, first_name_key, last_name_key, status);
CREATE INDEX applications_name_idx ON applications (account_id, last_name_key, first_name_key, driver_id)
    INCLUDE (state, driver_type, has_job_apps, experience_halves, endorsements, sent, status);
CREATE INDEX applications_first_name_idx ON applications (account_id, first_name_key, driver_id)
    INCLUDE (state, driver_type, has_job_apps, experience_halves, endorsements, sent, last_name_key, status);
CREATE INDEX applications_state_idx ON applications (account_id, state, driver_id)
    INCLUDE (driver_type, has_job_apps, experience_halves, endorsements, sent, first_name_key, last_name_key, status);
CREATE INDEX applications_driver_type_idx ON applications (account_id, driver_type, driver_id)
    INCLUDE (state, has_job_apps, experience_halves, endorsements, sent, first_name_key, last_name_key, status);
CREATE INDEX applications_sent_idx ON applications (account_id, sent, driver_id)
    INCLUDE (state, driver_type, has_job_apps, experience_halves, endorsements, first_name_key, last_name_key, status);
CREATE INDEX applications_location_page_idx ON applications (account_id, (floor(latitude * 4)::integer), longitude)
    INCLUDE (latitude, driver_id, sent, has_job_apps, state, driver_type, experience_halves, endorsements,
             first_name_key, last_name_key, status);
CREATE INDEX applications_status_idx ON applications (account_id, status, driver_id)
    INCLUDE (state, driver_type, has_job_apps, experience_halves, endorsements, sent, first_name_key, last_name_key);
