-- Servers also know every key in use, to answer a wrong key without a
-- lookup: a new key (or a key whose hash changed to a new one) tells every
-- listening server of its hash too, at commit, marked '+' so that it is
-- not taken for a key that ended.

CREATE OR REPLACE FUNCTION notify_api_key_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM pg_notify('jobboard_api_keys', OLD.key_hash);
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.key_hash IS DISTINCT FROM OLD.key_hash) THEN
        PERFORM pg_notify('jobboard_api_keys', '+' || NEW.key_hash);
    END IF;
    RETURN NULL;
END;
$$;

DROP TRIGGER api_keys_changed ON api_keys;

CREATE TRIGGER api_keys_changed
    AFTER INSERT OR UPDATE OR DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION notify_api_key_change();
