-- Job search: the filters in the index of the words, so that a count of
-- the jobs with some freight in some states, or of a query's words among
-- company drivers paid weekly, reads only the matching jobs.
--
-- A GIN index of several columns answers a condition on any of them, and
-- on several at once by intersecting their lists of jobs inside the index.
-- So the words index of every job and of each sample (migrations 0028 and
-- 0029) becomes a "match" index of the words, the filters with a value or
-- list of values per job, and the account. The filters it leaves out are
-- those a job may meet without a value (the license class: a job that asks
-- for none is kept), the TWIC flag (one value in ten is left out), the pay
-- (a range) and the time (the posted index answers it).
--
-- Without them, a count of a filter over every job read the whole table:
-- Flatbed in Texas or Oklahoma, 16,554 of 1,000,000 jobs, took 544 ms, and
-- each sample was read whole before it (18, 60 and 215 ms). With this
-- index the four counts took 0.1, 0.4, 1.7 and 22.7 ms, and the search
-- 30 ms at the median rather than 875 ms (bench/results, the search
-- report of 2026-12-03T160651Z).
--
-- The scalar columns are indexed by btree_gin's operator classes, which
-- PostgreSQL ships with its server (contrib); the extension is trusted, so
-- an owner of the database who is not a superuser may create it. Building
-- the four indexes took 60 s over 1,000,000 jobs; the words index of 0028
-- is dropped only once its successor is built.
CREATE EXTENSION IF NOT EXISTS btree_gin;

CREATE INDEX jobs_search_match_idx ON jobs
    USING gin (search_words, state, freight_type, driver_type, pay_frequency, route_type, employment_type, account_id)
    WHERE deleted_at IS NULL;
DROP INDEX jobs_search_words_idx;

CREATE INDEX jobs_search_sample16_match_idx ON jobs
    USING gin (search_words, state, freight_type, driver_type, pay_frequency, route_type, employment_type, account_id)
    WHERE deleted_at IS NULL AND (hashint8extended(id, 11) & 15) = 0;
DROP INDEX jobs_search_sample16_words_idx;

CREATE INDEX jobs_search_sample64_match_idx ON jobs
    USING gin (search_words, state, freight_type, driver_type, pay_frequency, route_type, employment_type, account_id)
    WHERE deleted_at IS NULL AND (hashint8extended(id, 11) & 63) = 0;
DROP INDEX jobs_search_sample64_words_idx;

CREATE INDEX jobs_search_sample256_match_idx ON jobs
    USING gin (search_words, state, freight_type, driver_type, pay_frequency, route_type, employment_type, account_id)
    WHERE deleted_at IS NULL AND (hashint8extended(id, 11) & 255) = 0;
DROP INDEX jobs_search_sample256_words_idx;
