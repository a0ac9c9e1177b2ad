-- Job search (docs/api.md, Job search): every account's active jobs, by
-- words, distance and filters.
--
-- The words of a job are kept by the database as the job is written, in the
-- same statement, so a job is found as soon as its post is answered and no
-- index lags behind the jobs. The title weighs most, then the city; the
-- description and requirements are HTML, whose tags and entities the text
-- parser reads as tokens of their own and English leaves out, so only
-- their text is searched.
--
-- A trigger rather than a generated column: PostgreSQL computes a stored
-- generated column again on every update of the row, and reading the words
-- is most of what writing a job costs (about 25 us a job of bench scenario
-- 1, against 5 us for the row). A withdrawal, which sets deleted_at, took
-- 14 ms for 1,000 jobs with the column generated and 0.5 ms with the
-- trigger, which reads the words again only when a text they come from
-- changes.
ALTER TABLE jobs ADD COLUMN search_words tsvector;

CREATE FUNCTION jobs_search_words() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.search_words :=
        setweight(to_tsvector('english'::regconfig, NEW.title), 'A') ||
        setweight(to_tsvector('english'::regconfig, coalesce(NEW.city, '')), 'B') ||
        to_tsvector('english'::regconfig, NEW.description) ||
        to_tsvector('english'::regconfig, coalesce(NEW.requirements, ''));
    RETURN NEW;
END
$$;

CREATE TRIGGER jobs_search_words_added BEFORE INSERT ON jobs
    FOR EACH ROW EXECUTE FUNCTION jobs_search_words();

CREATE TRIGGER jobs_search_words_changed BEFORE UPDATE OF title, city, description, requirements ON jobs
    FOR EACH ROW
    WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.city IS DISTINCT FROM NEW.city
          OR OLD.description IS DISTINCT FROM NEW.description OR OLD.requirements IS DISTINCT FROM NEW.requirements)
    EXECUTE FUNCTION jobs_search_words();

-- The jobs written before this migration.
UPDATE jobs SET search_words =
    setweight(to_tsvector('english'::regconfig, title), 'A') ||
    setweight(to_tsvector('english'::regconfig, coalesce(city, '')), 'B') ||
    to_tsvector('english'::regconfig, description) ||
    to_tsvector('english'::regconfig, coalesce(requirements, ''));

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
