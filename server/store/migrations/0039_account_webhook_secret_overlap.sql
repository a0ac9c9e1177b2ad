-- An account's callback signing secret rotates with an overlap, as a
-- webhook endpoint's does: the secret it replaces keeps signing beside it
-- (a second "v1,..." in webhook-signature) until previous_webhook_secret_until,
-- so the employer can move its receiver to the new secret without a
-- callback failing verification meanwhile. Before, a rotation replaced the
-- secret at once.
--
-- Adding nullable columns without a default is a change of the catalog
-- alone, but it takes the table's strongest lock, and waits for every
-- transaction holding a lock on an account (an import locks its account
-- while it runs) while every later one waits behind it: bounded, so an
-- upgrade run under load fails, and can be run again, rather than holding
-- the accounts for as long as the longest import.
SET LOCAL lock_timeout = '10s';
ALTER TABLE accounts
    ADD COLUMN previous_webhook_secret text,
    ADD COLUMN previous_webhook_secret_until timestamptz;
