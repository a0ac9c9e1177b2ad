-- Servers remember which account a key belongs to, so a request need not
-- look its key up. Any change that could end a key (revocation, a changed
-- hash, the key or its account deleted, the table truncated, by the service
-- or by hand in psql) tells every listening server to forget it, at commit;
-- '*' stands for every key.

CREATE FUNCTION notify_api_key_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('jobboard_api_keys', OLD.key_hash);
    RETURN NULL;
END;
$$;

CREATE TRIGGER api_keys_changed
    AFTER UPDATE OR DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION notify_api_key_change();

CREATE FUNCTION notify_api_keys_truncated() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('jobboard_api_keys', '*');
    RETURN NULL;
END;
$$;

CREATE TRIGGER api_keys_truncated
    AFTER TRUNCATE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION notify_api_keys_truncated();
