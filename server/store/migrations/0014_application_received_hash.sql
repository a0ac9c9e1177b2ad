-- An application sent again (a retried call, a file imported twice) is the
-- same application: stored again, but not received again, so it gets no
-- second lead event. received_hash is the SHA-256 of the last application
-- written to the row, received_again whether that write repeated the one
-- before it; the upsert sets both from the row it locked, so two
-- submissions racing each other still count one of them as the repeat.
ALTER TABLE applications
    ADD COLUMN received_hash  bytea,
    ADD COLUMN received_again boolean NOT NULL DEFAULT false;
