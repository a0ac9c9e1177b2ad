-- The sweep that completes imports the queue gave up on looks, every
-- minute, at the imports not yet complete: a handful among all the
-- finished ones, which stay for clients to read.
CREATE INDEX job_imports_unfinished_idx ON job_imports (requested_at) WHERE status <> 'complete';
