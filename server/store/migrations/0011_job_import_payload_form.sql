-- How an import's payload is written. Until now it was the API's jobs
-- request in protobuf binary, readable only as long as that message keeps
-- its field numbers and types; the store now writes a JSON form of its own
-- ('json'). Rows already there, and any an older server still inserts
-- without naming the form, are 'proto'.
ALTER TABLE job_imports ADD COLUMN payload_form text NOT NULL DEFAULT 'proto'
    CHECK (payload_form IN ('proto', 'json'));
