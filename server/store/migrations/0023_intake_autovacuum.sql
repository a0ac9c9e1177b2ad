-- The drivers list answers combinations of filters from its indexes alone
-- (0022) on the pages VACUUM has marked all-visible. A bulk load ANALYZEs
-- what it wrote as it ends (store.AnalyzeAfterBulkWrites) and leaves the
-- marking to autovacuum, which by default vacuums a table after inserts of
-- a fifth of its rows: at a million applications, 200,000 rows read twice
-- (index, then table) until it does. At a fiftieth it comes after 20,000,
-- within its next nap; a VACUUM after inserts reads only the new pages.
ALTER TABLE applications SET (autovacuum_vacuum_insert_scale_factor = 0.02);
ALTER TABLE job_applications SET (autovacuum_vacuum_insert_scale_factor = 0.02);
ALTER TABLE employment_history SET (autovacuum_vacuum_insert_scale_factor = 0.02);
ALTER TABLE drivers SET (autovacuum_vacuum_insert_scale_factor = 0.02);
