-- applications held the case-folded e-mail and names (store.FoldCase) as
-- email_lower, first_name_lower and last_name_lower, while drivers holds the
-- same folding of the same e-mail as email_key: one name for one thing. Only
-- the names change; the indexes on these columns follow them.
ALTER TABLE applications RENAME COLUMN email_lower TO email_key;
ALTER TABLE applications RENAME COLUMN first_name_lower TO first_name_key;
ALTER TABLE applications RENAME COLUMN last_name_lower TO last_name_key;
