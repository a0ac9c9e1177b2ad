-- Lead events (docs/api.md, Events and webhooks): the outbox every path that
-- stores an application or completes an import writes to in its own
-- transaction, the feed read from it, the account's webhook endpoints and
-- the log of their delivery attempts. Deliveries themselves are River jobs.

-- Each account's events are numbered in the order their transactions
-- commit. A transaction that writes events takes its account's row here
-- last, just before it commits, and holds it until then, so a number never
-- becomes visible before a smaller one: a reader following the feed by
-- "after" can never skip an event that commits late.
CREATE TABLE event_sequences (
    account_id bigint PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    last_seq   bigint NOT NULL DEFAULT 0
);

CREATE TABLE events (
    -- Shown as evt_ and the 32 hex digits of the UUID.
    id         uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    seq        bigint      NOT NULL,
    type       text        NOT NULL
        CHECK (type IN ('driver.application.received', 'job_import.completed', 'webhook.test')),
    created_at timestamptz NOT NULL DEFAULT now(),
    -- The event's object as the REST API wrote it when the event was
    -- created; json (not jsonb) keeps that text byte for byte.
    data       json        NOT NULL,
    UNIQUE (account_id, seq)
);

-- The feed filtered by type, and the retention clean-up.
CREATE INDEX events_account_type_idx ON events (account_id, type, seq);
CREATE INDEX events_created_idx ON events (created_at);

CREATE TABLE webhook_endpoints (
    -- Shown as we_ and the 32 hex digits of the UUID.
    id              uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id      bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    url             text        NOT NULL,
    events          text[]      NOT NULL,
    description     text,
    auth_type       text        CHECK (auth_type IN ('basic', 'bearer')),
    auth_username   text,
    -- The Basic password or the bearer token: sent, never answered.
    auth_secret     text,
    enabled         boolean     NOT NULL DEFAULT true,
    created_at      timestamptz NOT NULL DEFAULT now(),
    disabled_at     timestamptz,
    disabled_reason text        CHECK (disabled_reason IN ('manual', 'gone', 'failing')),
    secret          text        NOT NULL,
    -- The secret before the last rotation, which still signs until
    -- previous_secret_expires_at.
    previous_secret            text,
    previous_secret_expires_at timestamptz,
    -- One more each time the endpoint is enabled again. A delivery is
    -- queued under the generation of its time and dropped under any other,
    -- so retries pending when the endpoint was disabled never resume.
    generation      integer     NOT NULL DEFAULT 1,
    -- When the current run of failed attempts began; null after a success.
    failing_since   timestamptz,
    CHECK (enabled = (disabled_at IS NULL))
);

CREATE INDEX webhook_endpoints_account_idx ON webhook_endpoints (account_id, created_at);

-- Every delivery attempt, for the account (GET .../deliveries) and operators.
CREATE TABLE webhook_attempts (
    id           bigserial   PRIMARY KEY,
    endpoint_id  uuid        NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    -- No reference to events: the clean-up removes both by age.
    event_id     uuid        NOT NULL,
    event_type   text        NOT NULL,
    attempt      integer     NOT NULL,
    attempted_at timestamptz NOT NULL,
    -- HTTP status of the answer; null when there was none.
    status_code  integer,
    error        text,
    duration_ms  integer     NOT NULL
);

CREATE INDEX webhook_attempts_endpoint_idx ON webhook_attempts (endpoint_id, id);
CREATE INDEX webhook_attempts_time_idx ON webhook_attempts (attempted_at);
