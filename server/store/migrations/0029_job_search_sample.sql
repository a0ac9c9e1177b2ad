-- Job search at a million jobs: counting big matches from a sample, and the
-- radius read from its index alone.
--
-- Fixed samples of the active jobs, from which job search estimates the
-- size of a match too large to count exactly in time (docs/api.md, Job
-- search: counts are exact up to 10,000 matches, then may be estimates
-- within 10%). A job is in a sample when a hash of its id says so: a
-- pseudo-random choice that the job keeps for life, independent of its
-- account, its text and when it was posted. Not the id's residue: a feed's
-- jobs get consecutive ids, and a feed that repeats its fields in a cycle
-- (every sixth job a tanker) would put whole values in or out of a sample.
-- The hash is seeded, so data made with PostgreSQL's own unseeded hash of
-- small numbers does not line up with it.
--
-- Three samples, each a quarter of the one before: one job in 16, in 64
-- and in 256 (a job in the smallest is in all three). The search counts in
-- the smallest first and goes to a larger one only when the smaller holds
-- too few matches for an estimate, so an estimate never reads more than
-- about four times the matches it needs: counting 'driver', in 853,603 of
-- 1,000,000 jobs, took 3.0 s over every job and 0.3 s in the first sample.
-- Each index holds only its sample; the statements repeat the predicate
-- word for word, which is how PostgreSQL knows a partial index applies.
CREATE INDEX jobs_search_sample16_words_idx ON jobs USING gin (search_words)
    WHERE deleted_at IS NULL AND (hashint8extended(id, 11) & 15) = 0;
CREATE INDEX jobs_search_sample16_posted_idx ON jobs (created_at DESC, id DESC)
    WHERE deleted_at IS NULL AND (hashint8extended(id, 11) & 15) = 0;
CREATE INDEX jobs_search_sample16_zip_idx ON jobs (left(postal_code, 5)) INCLUDE (postal_code)
    WHERE deleted_at IS NULL AND postal_code IS NOT NULL AND (hashint8extended(id, 11) & 15) = 0;

CREATE INDEX jobs_search_sample64_words_idx ON jobs USING gin (search_words)
    WHERE deleted_at IS NULL AND (hashint8extended(id, 11) & 63) = 0;
CREATE INDEX jobs_search_sample64_posted_idx ON jobs (created_at DESC, id DESC)
    WHERE deleted_at IS NULL AND (hashint8extended(id, 11) & 63) = 0;
CREATE INDEX jobs_search_sample64_zip_idx ON jobs (left(postal_code, 5)) INCLUDE (postal_code)
    WHERE deleted_at IS NULL AND postal_code IS NOT NULL AND (hashint8extended(id, 11) & 63) = 0;

CREATE INDEX jobs_search_sample256_words_idx ON jobs USING gin (search_words)
    WHERE deleted_at IS NULL AND (hashint8extended(id, 11) & 255) = 0;
CREATE INDEX jobs_search_sample256_posted_idx ON jobs (created_at DESC, id DESC)
    WHERE deleted_at IS NULL AND (hashint8extended(id, 11) & 255) = 0;
CREATE INDEX jobs_search_sample256_zip_idx ON jobs (left(postal_code, 5)) INCLUDE (postal_code)
    WHERE deleted_at IS NULL AND postal_code IS NOT NULL AND (hashint8extended(id, 11) & 255) = 0;

-- The jobs of the ZIP codes within a radius, with what a count or a page
-- ordered by distance or by time needs from each: read from the index
-- alone, not from rows of a few kilobytes. PostgreSQL reads an expression
-- index alone only when the expression's column is in it too, hence the
-- postal code. Counting the 12,668 jobs within 100 miles of 77002 among
-- 1,000,000 took 572 ms with the index of 0028 (the planner scanned the
-- table) and 6 ms with this one.
DROP INDEX jobs_search_zip_idx;
CREATE INDEX jobs_search_zip_idx ON jobs (left(postal_code, 5)) INCLUDE (postal_code, created_at, id, account_id)
    WHERE deleted_at IS NULL AND postal_code IS NOT NULL;

-- Statistics of the five-digit ZIP, which PostgreSQL keeps for a column but
-- not for an expression outside an index it can read them from: without
-- them it took each ZIP of a radius to hold 1 job in 200 (5,000 of a
-- million rather than 25), read the whole table instead of the radius's
-- jobs, and a search for words within 100 miles with two filters took
-- 5.5 s rather than 70 ms.
CREATE STATISTICS jobs_search_zip_stats ON (left(postal_code, 5)) FROM jobs;
ANALYZE jobs;
