-- The job_title filter of the drivers list: each job application carries
-- its job's title, lower-cased, so one range of one index holds a title's
-- applicants in driver order, instead of a probe per job of the title.
-- Inserts set it from the job; a trigger keeps it following the job's title.

ALTER TABLE job_applications ADD COLUMN job_title_lower text;

UPDATE job_applications ja SET job_title_lower = lower(j.title) FROM jobs j WHERE j.id = ja.job_id;

ALTER TABLE job_applications ALTER COLUMN job_title_lower SET NOT NULL;

CREATE INDEX job_applications_title_idx ON job_applications (account_id, job_title_lower, driver_id);

-- The per-job route it replaces.
DROP INDEX job_applications_job_driver_idx;
DROP INDEX jobs_title_idx;
CREATE INDEX job_applications_job_idx ON job_applications (job_id);

-- One statement for a whole upsert's changed titles (transition tables),
-- touching only the applications of jobs whose title really changed.
CREATE FUNCTION follow_job_titles() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE job_applications ja SET job_title_lower = lower(n.title)
      FROM new_jobs n JOIN old_jobs o ON o.id = n.id
     WHERE ja.job_id = n.id AND lower(o.title) <> lower(n.title);
    RETURN NULL;
END;
$$;

CREATE TRIGGER jobs_title_followed
    AFTER UPDATE ON jobs
    REFERENCING OLD TABLE AS old_jobs NEW TABLE AS new_jobs
    FOR EACH STATEMENT EXECUTE FUNCTION follow_job_titles();
