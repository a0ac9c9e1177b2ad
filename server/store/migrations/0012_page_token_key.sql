-- The key that signs list page tokens (AIP-158: opaque, tamper-proof). It is
-- created once, here, so that every replica reading this database signs and
-- checks tokens alike without a setting of its own. gen_random_uuid draws
-- from the server's strong random source; two give 244 random bits.
CREATE TABLE page_token_key (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    key bytea NOT NULL
);
INSERT INTO page_token_key (key)
VALUES (decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));
