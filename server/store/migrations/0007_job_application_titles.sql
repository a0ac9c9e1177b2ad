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

-- One statement for a whole upsert's rows (a transition table of the new
-- rows only: the old ones would be copied too, descriptions and all). The
-- comparison is with the title the applications carry, and the ids come as
-- an array so the plan probes job_applications_job_idx per job instead of
-- hashing every job application; an upsert that renames nothing writes
-- nothing.
CREATE FUNCTION follow_job_titles() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE job_applications ja SET job_title_lower = n.title_lower
      FROM (SELECT id, lower(title) AS title_lower FROM new_jobs) n
     WHERE ja.job_id = ANY (ARRAY(SELECT id FROM new_jobs))
       AND ja.job_id = n.id AND ja.job_title_lower <> n.title_lower;
    RETURN NULL;
END;
$$;

CREATE TRIGGER jobs_title_followed
    AFTER UPDATE ON jobs
    REFERENCING NEW TABLE AS new_jobs
    FOR EACH STATEMENT EXECUTE FUNCTION follow_job_titles();
