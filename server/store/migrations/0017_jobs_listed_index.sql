-- The jobs list of an account with many withdrawn jobs. The list reads the
-- account's active jobs in id order; the planner estimated them as the
-- account's share of all rows times the share of active rows in the table,
-- so an account with 12,000 withdrawn jobs and 100 active ones looked like
-- 10,900 active, and with a LIMIT it walked jobs_pkey through every
-- account's jobs (300 ms at 1,000 accounts) instead of the account's own.
-- An index on the account of active jobs only (NULL for withdrawn ones)
-- gets statistics of its own from ANALYZE, which count each account's
-- active jobs alone; it is also in the list's order.
CREATE INDEX jobs_listed_idx ON jobs ((CASE WHEN deleted_at IS NULL THEN account_id END), id);
