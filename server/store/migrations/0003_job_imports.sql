-- Job imports: a feed of jobs processed in the background as one transaction.
-- The queue itself is River's tables, created by River's own migrations.

CREATE TABLE job_imports (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id      bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    status          text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'complete')),
    requested_at    timestamptz NOT NULL DEFAULT now(),
    completed_at    timestamptz,
    -- JobImportResults as JSON once complete.
    results         jsonb,
    -- The jobs as sent (protobuf), emptied once the import is complete.
    payload         bytea       NOT NULL,
    callback_url    text,
    delete_jobs     boolean     NOT NULL DEFAULT false,
    -- Absolute base of links.self, fixed when the import is created.
    base_url        text        NOT NULL,
    idempotency_key text,
    -- SHA-256 of the request body, to tell a retry from a different request.
    request_hash    text
);

CREATE UNIQUE INDEX job_imports_idempotency_idx ON job_imports (account_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX job_imports_account_idx ON job_imports (account_id, requested_at);

-- Every delivery attempt of an import's completion callback, for operators.
CREATE TABLE callback_attempts (
    id           bigserial PRIMARY KEY,
    import_id    uuid        NOT NULL REFERENCES job_imports (id) ON DELETE CASCADE,
    webhook_id   text        NOT NULL,
    attempt      integer     NOT NULL,
    attempted_at timestamptz NOT NULL DEFAULT now(),
    -- HTTP status of the answer; null when there was none (timeout, refused, ...)
    status_code  integer,
    error        text,
    duration_ms  integer     NOT NULL
);

CREATE INDEX callback_attempts_import_idx ON callback_attempts (import_id, id);
