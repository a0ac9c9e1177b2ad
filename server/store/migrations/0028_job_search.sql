-- Job search (docs/api.md, Job search): every account's active jobs, by
-- words, distance and filters.
--
-- The words of a job are kept by the database as the job is written, in the
-- same statement, so a job is found as soon as its post is answered and no
-- index lags behind the jobs. The title weighs most, then the city; the
-- description and requirements are HTML, whose tags and entities the text
-- parser reads as tokens of their own and English leaves out, so only
-- their text is searched.
ALTER TABLE jobs ADD COLUMN search_words tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english'::regconfig, title), 'A') ||
    setweight(to_tsvector('english'::regconfig, coalesce(city, '')), 'B') ||
    to_tsvector('english'::regconfig, description) ||
    to_tsvector('english'::regconfig, coalesce(requirements, ''))) STORED;

-- Words: the matches of a query, among active jobs only.
CREATE INDEX jobs_search_words_idx ON jobs USING gin (search_words) WHERE deleted_at IS NULL;

-- Newest first (the instant a job was first added, then its id), and the
-- posted_within_days filter.
CREATE INDEX jobs_search_posted_idx ON jobs (created_at DESC, id DESC) WHERE deleted_at IS NULL;

-- Distance: the jobs of the ZIP codes within a radius. A job's place is its
-- five-digit ZIP's centroid, as for drivers (§6).
CREATE INDEX jobs_search_zip_idx ON jobs (left(postal_code, 5)) WHERE deleted_at IS NULL AND postal_code IS NOT NULL;

-- The ZIP codes within a radius, read from their box.
CREATE INDEX zip_centroids_location_idx ON zip_centroids (latitude, longitude);
