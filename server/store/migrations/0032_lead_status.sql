-- Lead status (docs/api.md, Lead status): what became of each driver who
-- applied to an account, as the employer tells it.
--
-- An account holds one row per driver in applications, so the status is
-- four columns of that row: the drivers list filters and shows it from the
-- row it already reads, and an erasure that removes the row removes it.
-- Every row starts as new; the default is a constant, so adding the column
-- rewrites no row.
--
-- status_changed_at is when the employer's system says the change
-- happened, or when a new application turned withdrawn into new. It is
-- null while the status is still the new of the driver's applications,
-- shown with the row's sent; no change is stale against that.
ALTER TABLE applications
    ADD COLUMN status            text NOT NULL DEFAULT 'new',
    ADD COLUMN status_reason     text,
    ADD COLUMN status_note       text,
    ADD COLUMN status_changed_at timestamptz;

-- The words are the service's (domain.LeadStatuses); the check keeps a
-- hand-made row from holding one the API cannot show. The migration holds
-- the table locked from the first ALTER to its commit; checking the
-- existing rows (all new) reads the table once.
ALTER TABLE applications ADD CONSTRAINT applications_status_check CHECK (status IN
    ('new', 'reviewing', 'contacted', 'interviewing', 'offered', 'hired', 'rejected', 'withdrawn'));

-- The list's status filter, like the other filters: one account's drivers
-- of some statuses, read from the index.
CREATE INDEX applications_status_idx ON applications (account_id, status, driver_id);

-- The statuses a driver had before the current one in an account, newest
-- first by changed_at; the service keeps the 50 newest. Removing the
-- account's row of the driver (an erasure) removes them.
CREATE TABLE driver_status_history (
    account_id bigint      NOT NULL,
    driver_id  bigint      NOT NULL,
    id         bigint      GENERATED ALWAYS AS IDENTITY,
    status     text        NOT NULL,
    reason     text,
    changed_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, driver_id, id),
    FOREIGN KEY (account_id, driver_id) REFERENCES applications (account_id, driver_id) ON DELETE CASCADE
);

-- A change of status is an event of its own (driver.status.changed). The
-- check is replaced by one that takes it.
ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check CHECK (type IN
    ('driver.application.received', 'driver.status.changed', 'job_import.completed', 'webhook.test'));
