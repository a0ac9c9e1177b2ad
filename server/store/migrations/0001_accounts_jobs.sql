-- Employer accounts, their API keys and their job postings.

CREATE TABLE accounts (
    id             bigserial PRIMARY KEY,
    name           text        NOT NULL CHECK (name <> ''),
    -- Standard Webhooks signing secret (whsec_...), used to sign import callbacks.
    webhook_secret text        NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
    id         bigserial PRIMARY KEY,
    account_id bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    -- Hex SHA-256 of the whole key: the key itself is shown once and never stored.
    key_hash   text        NOT NULL,
    -- The first characters of the key, so operators can name a key without knowing it.
    key_prefix text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz,
    CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash)
);

CREATE INDEX api_keys_account_idx ON api_keys (account_id);

CREATE TABLE jobs (
    id               bigserial PRIMARY KEY,
    account_id       bigint        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    reference_number text          NOT NULL,
    title            text          NOT NULL,
    city             text,
    state            text          NOT NULL,
    postal_code      text,
    driver_type      text          NOT NULL,
    preference       text,
    freight_type     text          NOT NULL,
    pay_amount_min   numeric(9, 2),
    pay_amount_max   numeric(9, 2),
    pay_frequency    text,
    employment_type  text[]        NOT NULL DEFAULT '{}',
    route_type       text[]        NOT NULL DEFAULT '{}',
    description      text          NOT NULL,
    requirements     text,
    twic_only        boolean       NOT NULL DEFAULT false,
    license_class    text,
    -- The UTC day the job was added, or brought back after a delete.
    posted_on        date          NOT NULL,
    created_at       timestamptz   NOT NULL DEFAULT now(),
    updated_at       timestamptz   NOT NULL DEFAULT now(),
    -- Soft delete: a deleted job keeps its id, so posting its reference again
    -- brings the same job back and driver applications keep their job_id.
    deleted_at       timestamptz,
    CONSTRAINT jobs_account_reference_key UNIQUE (account_id, reference_number)
);

-- Lists and the active-job count read only live rows of one account.
CREATE INDEX jobs_active_idx ON jobs (account_id, id) WHERE deleted_at IS NULL;
