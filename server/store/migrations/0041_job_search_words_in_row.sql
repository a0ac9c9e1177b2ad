-- A job's words in its row. A row of over 2 KB is toasted, and PostgreSQL
-- moves the largest value out of the row first: a job's words (1.6 KB for
-- the generated jobs of the search benchmark, which do not compress) before
-- its description. A search that walks the jobs newest first checks each
-- one's words, and read from the TOAST table each check looks them up in
-- its index: the newest 1,000 of 'hazmat & tanker' among 1,000,000 jobs
-- checked 11,280 jobs in 40 ms (46,566 buffers), against 10 to 12 ms with
-- the words in the rows. The candidates of a search within a radius are
-- checked the same way.
--
-- STORAGE MAIN keeps the words in the row, compressed when they compress,
-- and moves the description out first; the words leave the row only when
-- it would not fit a page otherwise. It applies to rows written from now
-- on: a job's words move into its row when it is next written, or for
-- every job at once with VACUUM FULL jobs (docs/operations.md). The
-- statement changes no row and takes a lock that lets reads and writes go
-- on (SHARE UPDATE EXCLUSIVE); its wait for one, behind a VACUUM of jobs,
-- is bounded as migration 0039's are.
SET LOCAL lock_timeout = '10s';
ALTER TABLE jobs ALTER search_words SET STORAGE MAIN;
