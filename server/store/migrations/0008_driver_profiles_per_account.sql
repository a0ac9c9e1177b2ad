-- What a driver sent to one account is never shown to another (contract
-- section 6). Until now the profile lived once per person, in drivers, and
-- the newest application to any account overwrote what every account saw.
-- The profile and the employment history now live in the account's own
-- row, applications (account_id, driver_id), written from the newest
-- application the person sent to that account; drivers keeps only the
-- identity: one id per case-folded e-mail.
--
-- The list's filter columns (state, driver_type, endorsements, the lower-case
-- keys, experience, the home centroid) were already in applications with
-- their per-account indexes; they now follow the account's own profile, so
-- the indexes of migrations 0002 and 0005 serve every filter as before.

ALTER TABLE applications
    ADD COLUMN email                     text,
    ADD COLUMN first_name                text,
    ADD COLUMN last_name                 text,
    ADD COLUMN address                   text,
    ADD COLUMN address2                  text,
    ADD COLUMN city                      text,
    ADD COLUMN zip                       text,
    ADD COLUMN phone                     text,
    ADD COLUMN experience                text,
    ADD COLUMN freight_experience        text,
    ADD COLUMN freight_preferences       text,
    ADD COLUMN license_state             text,
    ADD COLUMN preferred_assignments     text,
    ADD COLUMN preferred_regions         text,
    ADD COLUMN has_team                  text,
    ADD COLUMN license_class             text,
    ADD COLUMN date_of_birth             date,
    ADD COLUMN twic_card                 text,
    ADD COLUMN accidents                 text,
    ADD COLUMN moving_violations         text,
    ADD COLUMN last_license_suspension   integer,
    ADD COLUMN last_dui                  integer,
    ADD COLUMN interested_lease_purchase text,
    ADD COLUMN teams                     text,
    ADD COLUMN trucks_owned              text,
    ADD COLUMN is_premium                boolean;

-- Existing rows: the only profile kept so far is the person's newest, so
-- every account of that person gets a copy of it, filter columns included.
UPDATE applications a
   SET (email, first_name, last_name, address, address2, city, zip, phone, experience,
        freight_experience, freight_preferences, license_state, preferred_assignments,
        preferred_regions, has_team, license_class, date_of_birth, twic_card, accidents,
        moving_violations, last_license_suspension, last_dui, interested_lease_purchase,
        teams, trucks_owned, is_premium, state, driver_type, endorsements)
     = (d.email, d.first_name, d.last_name, d.address, d.address2, d.city, d.zip, d.phone, d.experience,
        d.freight_experience, d.freight_preferences, d.license_state, d.preferred_assignments,
        d.preferred_regions, d.has_team, d.license_class, d.date_of_birth, d.twic_card, d.accidents,
        d.moving_violations, d.last_license_suspension, d.last_dui, d.interested_lease_purchase,
        d.teams, d.trucks_owned, d.is_premium, d.state, d.driver_type, d.endorsements)
  FROM drivers d
 WHERE d.id = a.driver_id;

ALTER TABLE applications
    ALTER COLUMN email      SET NOT NULL,
    ALTER COLUMN first_name SET NOT NULL,
    ALTER COLUMN last_name  SET NOT NULL,
    ALTER COLUMN address    SET NOT NULL,
    ALTER COLUMN city       SET NOT NULL,
    ALTER COLUMN zip        SET NOT NULL,
    ALTER COLUMN phone      SET NOT NULL,
    ALTER COLUMN experience SET NOT NULL,
    ALTER COLUMN is_premium SET DEFAULT false,
    ALTER COLUMN is_premium SET NOT NULL;

-- Employment history, per account too: each account's copy of the one kept.
ALTER TABLE employment_history RENAME TO employment_history_0007;
ALTER TABLE employment_history_0007 RENAME CONSTRAINT employment_history_pkey TO employment_history_0007_pkey;

CREATE TABLE employment_history (
    account_id bigint  NOT NULL,
    driver_id  bigint  NOT NULL,
    position   integer NOT NULL,
    company    text    NOT NULL,
    state      text    NOT NULL,
    phone      text    NOT NULL,
    start_date date    NOT NULL,
    end_date   date,
    PRIMARY KEY (account_id, driver_id, position),
    FOREIGN KEY (account_id, driver_id) REFERENCES applications (account_id, driver_id) ON DELETE CASCADE
);

INSERT INTO employment_history (account_id, driver_id, position, company, state, phone, start_date, end_date)
SELECT a.account_id, e.driver_id, e.position, e.company, e.state, e.phone, e.start_date, e.end_date
  FROM employment_history_0007 e JOIN applications a ON a.driver_id = e.driver_id;

DROP TABLE employment_history_0007;

-- drivers: the identity alone.
ALTER TABLE drivers
    DROP COLUMN email,
    DROP COLUMN first_name_key,
    DROP COLUMN last_name_key,
    DROP COLUMN first_name,
    DROP COLUMN last_name,
    DROP COLUMN address,
    DROP COLUMN address2,
    DROP COLUMN city,
    DROP COLUMN state,
    DROP COLUMN zip,
    DROP COLUMN phone,
    DROP COLUMN driver_type,
    DROP COLUMN experience,
    DROP COLUMN endorsements,
    DROP COLUMN freight_experience,
    DROP COLUMN freight_preferences,
    DROP COLUMN license_state,
    DROP COLUMN preferred_assignments,
    DROP COLUMN preferred_regions,
    DROP COLUMN has_team,
    DROP COLUMN license_class,
    DROP COLUMN date_of_birth,
    DROP COLUMN twic_card,
    DROP COLUMN accidents,
    DROP COLUMN moving_violations,
    DROP COLUMN last_license_suspension,
    DROP COLUMN last_dui,
    DROP COLUMN interested_lease_purchase,
    DROP COLUMN teams,
    DROP COLUMN trucks_owned,
    DROP COLUMN is_premium,
    DROP COLUMN profile_sent;
