-- The X-Request-Id of the request that created an import, so its worker's
-- log lines and its callback deliveries can be traced back to that request.
-- Null for imports created before this column existed.

ALTER TABLE job_imports ADD COLUMN request_id text;
