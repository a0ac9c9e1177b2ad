-- Drivers, their applications to accounts, and ZIP centroids for radius search.

-- Centroids of US ZIP codes, loaded from the embedded geo/zip_centroids.csv.
CREATE TABLE zip_centroids (
    zip       text PRIMARY KEY,
    latitude  double precision NOT NULL,
    longitude double precision NOT NULL
);

-- A driver is one person across accounts, identified by e-mail. The profile
-- is that of the newest application, whichever account it went to.
CREATE TABLE drivers (
    id                        bigserial PRIMARY KEY,
    email                     text        NOT NULL,
    -- Case-folded e-mail and names, computed by the service with Unicode
    -- rules: PostgreSQL's lower() depends on the database locale and folds
    -- only ASCII in the C locale.
    email_key                 text        NOT NULL,
    first_name_key            text        NOT NULL,
    last_name_key             text        NOT NULL,
    first_name                text        NOT NULL,
    last_name                 text        NOT NULL,
    address                   text        NOT NULL,
    address2                  text,
    city                      text        NOT NULL,
    state                     text        NOT NULL,
    zip                       text        NOT NULL,
    phone                     text        NOT NULL,
    driver_type               text        NOT NULL,
    experience                text        NOT NULL,
    endorsements              text[]      NOT NULL DEFAULT '{}',
    freight_experience        text,
    freight_preferences       text,
    license_state             text,
    preferred_assignments     text,
    preferred_regions         text,
    has_team                  text,
    license_class             text,
    date_of_birth             date,
    twic_card                 text,
    accidents                 text,
    moving_violations         text,
    last_license_suspension   integer,
    last_dui                  integer,
    interested_lease_purchase text,
    teams                     text,
    trucks_owned              text,
    is_premium                boolean     NOT NULL DEFAULT false,
    -- sent of the application this profile came from: an older application
    -- arriving later does not overwrite a newer profile.
    profile_sent              timestamptz NOT NULL,
    created_at                timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX drivers_email_key ON drivers (email_key);

CREATE TABLE employment_history (
    driver_id  bigint  NOT NULL REFERENCES drivers (id) ON DELETE CASCADE,
    position   integer NOT NULL,
    company    text    NOT NULL,
    state      text    NOT NULL,
    phone      text    NOT NULL,
    start_date date    NOT NULL,
    end_date   date,
    PRIMARY KEY (driver_id, position)
);

-- An application of a driver to an account. Besides sent, it carries copies
-- of the driver's searchable fields in the form the filters compare, so every
-- list filter is an index scan within one account, whatever the number of
-- accounts; they are rewritten whenever the driver's profile changes.
CREATE TABLE applications (
    account_id       bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    driver_id        bigint      NOT NULL REFERENCES drivers (id) ON DELETE CASCADE,
    sent             timestamptz NOT NULL,
    has_job_apps     boolean     NOT NULL DEFAULT false,
    state            text        NOT NULL,
    driver_type      text        NOT NULL,
    email_lower      text        NOT NULL,
    phone_digits     text        NOT NULL,
    first_name_lower text        NOT NULL,
    last_name_lower  text        NOT NULL,
    -- experience as a number; null when the text is not one
    experience_years numeric,
    endorsements     text[]      NOT NULL,
    -- centroid of the home ZIP; null when the ZIP is not in zip_centroids
    latitude         double precision,
    longitude        double precision,
    PRIMARY KEY (account_id, driver_id)
);

CREATE INDEX applications_driver_idx ON applications (driver_id);
CREATE INDEX applications_sent_idx ON applications (account_id, sent, driver_id);
CREATE INDEX applications_state_idx ON applications (account_id, state, driver_id);
CREATE INDEX applications_driver_type_idx ON applications (account_id, driver_type, driver_id);
CREATE INDEX applications_email_idx ON applications (account_id, email_lower);
CREATE INDEX applications_phone_idx ON applications (account_id, phone_digits);
CREATE INDEX applications_name_idx ON applications (account_id, last_name_lower, first_name_lower, driver_id);
CREATE INDEX applications_first_name_idx ON applications (account_id, first_name_lower);
CREATE INDEX applications_experience_idx ON applications (account_id, experience_years);
CREATE INDEX applications_has_job_apps_idx ON applications (account_id, has_job_apps, driver_id);
CREATE INDEX applications_location_idx ON applications (account_id, latitude, longitude);
CREATE INDEX applications_endorsements_idx ON applications USING gin (endorsements);

-- A driver's application to one of an account's jobs. The job may since
-- have been deleted: the row and its job_id stay.
CREATE TABLE job_applications (
    account_id    bigint      NOT NULL,
    driver_id     bigint      NOT NULL,
    job_id        bigint      NOT NULL REFERENCES jobs (id),
    is_direct_app boolean     NOT NULL,
    created_at    timestamptz NOT NULL,
    PRIMARY KEY (driver_id, job_id),
    FOREIGN KEY (account_id, driver_id) REFERENCES applications (account_id, driver_id) ON DELETE CASCADE
);

CREATE INDEX job_applications_job_idx ON job_applications (job_id);
CREATE INDEX job_applications_account_driver_idx ON job_applications (account_id, driver_id);
CREATE INDEX jobs_title_idx ON jobs (account_id, lower(title));
