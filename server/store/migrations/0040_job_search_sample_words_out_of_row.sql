-- The words of job_search_sample out of its rows, as migration 0037 meant
-- them to be. PostgreSQL toasts only a row of over 2 KB
-- (TOAST_TUPLE_THRESHOLD), whatever toast_tuple_target says; the target
-- applies once a row is toasted. A sampled job's row, its words included,
-- is under that (1.8 KB, 1.6 KB of it words, for the generated jobs of the
-- search benchmark), so its trigger's rows kept their words: at 1,000,000
-- jobs the table was 96 MB, not the 13 MB of 0037's own fill (whose words,
-- read from jobs, were already out of line), and the sample's reads left
-- shared buffers. Every match of 'driver' in the sample, with the counts
-- of three facets, took 49 ms there against 28 ms from narrow rows; the
-- count of 'hazmat & tanker' 7.3 ms against 3.2 ms.
--
-- toast_pad, 2 KB of spaces, puts every row over the threshold: toasted,
-- the pad compresses to some 35 bytes and the words, to reach the target
-- of 128 bytes, leave the row: a row is its filters, the pad and a pointer
-- to its words again, as 0037's own fill made them. The pad is
-- written afresh with every row (pad_job_search_sample), since a row
-- updated with its pad compressed would be under the threshold again. The
-- words are read only by a check the words' index cannot answer alone (a
-- phrase, a weight).
--
-- The table is filled again from jobs, which rewrites its rows narrow (an
-- update may keep a row's new version on its old page, the table as
-- large). Writers of jobs wait from the first statement (their triggers
-- write this table), and so do searches that read this table, from ADD
-- COLUMN to the end; other readers of jobs do not. At a million jobs the fill reads jobs
-- whole: 11.6 s for this INSERT, measured without the pad's trigger. The
-- locks wait at most 10 s for running transactions (an import holds jobs
-- for its whole run), as 0039's do: an upgrade under load fails, and can
-- be run again, rather than stall every writer behind that transaction.
SET LOCAL lock_timeout = '10s';
LOCK TABLE jobs IN SHARE MODE;

-- MAIN, for the pad to be compressed in its row rather than moved out of it.
ALTER TABLE job_search_sample ADD COLUMN toast_pad text, ALTER toast_pad SET STORAGE MAIN;

CREATE FUNCTION pad_job_search_sample() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.toast_pad := repeat(' ', 2048);
    RETURN NEW;
END;
$$;

CREATE TRIGGER job_search_sample_padded BEFORE INSERT OR UPDATE ON job_search_sample
    FOR EACH ROW EXECUTE FUNCTION pad_job_search_sample();

TRUNCATE job_search_sample;
INSERT INTO job_search_sample (id, account_id, created_at, postal_code, state, freight_type, driver_type,
        pay_frequency, route_type, employment_type, license_class, twic_only, pay_amount_min,
        pay_amount_max, search_words)
SELECT id, account_id, created_at, postal_code, state, freight_type, driver_type, pay_frequency,
       route_type, employment_type, license_class, twic_only, pay_amount_min, pay_amount_max, search_words
  FROM jobs
 WHERE deleted_at IS NULL AND (hashint8extended(id, 11) & 15) = 0;
