-- count_job_facets (migration 0036) found the jobs an update moved between
-- facets by joining the update's old rows to its new ones. PL/pgSQL plans
-- a statement once a session and keeps the plan, and a transition table
-- is planned at the rows it held then: a session whose first update of
-- jobs touched one job kept a nested loop, and each later update of n jobs
-- on it compared n times n rows. Every pooled connection whose first post
-- was of one job did so: withdrawing 1,000 jobs then spent 151-268 ms
-- comparing 1,000,000 pairs (auto_explain, bench scenario 1), and 10,000
-- would compare 100,000,000.
--
-- The update's rows are now counted without a join: each new row adds
-- one, each old row takes one away, grouped by the job and what it is
-- counted by, so a job whose facets did not change cancels out before its
-- keys are made; what is left is counted as before. Grouping costs the
-- same whatever plan a session keeps.
CREATE OR REPLACE FUNCTION count_job_facets() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO job_facet_counts (account_id, sample, facet, value, n)
        SELECT CASE WHEN grouping(j.account_id) = 1 THEN 0 ELSE j.account_id END, k.sample, k.facet, k.value, count(*)
          FROM new_rows j,
               job_facet_keys(j.id, j.driver_type, j.freight_type, j.route_type, j.employment_type,
                              j.pay_frequency, j.state, j.license_class) k
         WHERE j.deleted_at IS NULL
         GROUP BY GROUPING SETS ((j.account_id, k.sample, k.facet, k.value), (k.sample, k.facet, k.value));
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO job_facet_counts (account_id, sample, facet, value, n)
        SELECT CASE WHEN grouping(j.account_id) = 1 THEN 0 ELSE j.account_id END, k.sample, k.facet, k.value, -count(*)
          FROM old_rows j,
               job_facet_keys(j.id, j.driver_type, j.freight_type, j.route_type, j.employment_type,
                              j.pay_frequency, j.state, j.license_class) k
         WHERE j.deleted_at IS NULL
         GROUP BY GROUPING SETS ((j.account_id, k.sample, k.facet, k.value), (k.sample, k.facet, k.value));
    ELSE
        WITH sides AS (
            SELECT id, account_id, driver_type, freight_type, route_type, employment_type,
                   pay_frequency, state, license_class, deleted_at IS NULL AS active, 1 AS n
              FROM new_rows
            UNION ALL
            SELECT id, account_id, driver_type, freight_type, route_type, employment_type,
                   pay_frequency, state, license_class, deleted_at IS NULL, -1
              FROM old_rows),
        c AS (
            SELECT id, account_id, driver_type, freight_type, route_type, employment_type,
                   pay_frequency, state, license_class, sum(n) AS n
              FROM sides
             GROUP BY id, account_id, driver_type, freight_type, route_type, employment_type,
                      pay_frequency, state, license_class, active
            HAVING sum(n) <> 0 AND active)
        INSERT INTO job_facet_counts (account_id, sample, facet, value, n)
        SELECT CASE WHEN grouping(c.account_id) = 1 THEN 0 ELSE c.account_id END, k.sample, k.facet, k.value, sum(c.n)
          FROM c,
               job_facet_keys(c.id, c.driver_type, c.freight_type, c.route_type, c.employment_type,
                              c.pay_frequency, c.state, c.license_class) k
         GROUP BY GROUPING SETS ((c.account_id, k.sample, k.facet, k.value), (k.sample, k.facet, k.value))
        HAVING sum(c.n) <> 0;
    END IF;
    RETURN NULL;
END;
$$;
