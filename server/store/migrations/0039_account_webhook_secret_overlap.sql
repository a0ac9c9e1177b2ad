-- An account's callback signing secret rotates with an overlap, as a
-- webhook endpoint's does: the secret it replaces keeps signing beside it
-- (a second "v1,..." in webhook-signature) until previous_webhook_secret_until,
-- so the employer can move its receiver to the new secret without a
-- callback failing verification meanwhile. Before, a rotation replaced the
-- secret at once.
ALTER TABLE accounts
    ADD COLUMN previous_webhook_secret text,
    ADD COLUMN previous_webhook_secret_until timestamptz;
