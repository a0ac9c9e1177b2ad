-- follow_job_titles (migration 0007) runs one statement a jobs update,
-- planned for its rows so that each job probes job_applications_job_idx
-- once. PL/pgSQL plans a statement once a session and keeps the plan, at
-- the rows the update's transition table held then (migration 0043 tells
-- the same of the facet counts): a session whose first update of jobs
-- touched one job kept a nested loop that tests, for each job of every
-- later update, its id against the array of all of that update's ids.
-- Updating 1,000 jobs with applications then spent 43-58 ms in this
-- trigger on such a session (auto_explain, bench scenario 1), where a
-- plan for 1,000 rows reads each job's applications once.
--
-- The statement is now planned at each run (EXECUTE), for the rows that
-- run has: a fraction of a millisecond, against a plan that may be wrong
-- by the size of every update after the first.
CREATE OR REPLACE FUNCTION follow_job_titles() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE $sql$
    UPDATE job_applications ja SET job_title_lower = n.title_lower
      FROM (SELECT id, lower(title) AS title_lower FROM new_jobs) n
     WHERE ja.job_id = ANY (ARRAY(SELECT id FROM new_jobs))
       AND ja.job_id = n.id AND ja.job_title_lower <> n.title_lower
    $sql$;
    RETURN NULL;
END;
$$;
