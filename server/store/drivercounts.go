package store

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lib/pq"
)

// The drivers list's exact counts from application_counts (migrations
// 0015 and 0018): the sum of a value's rows, instead of a count(*) that visits every
// match. Only a filter of one column the table counts by has its answer
// there; any other filter set is counted in applications.

// countedColumn is a filter that application_counts answers alone: the
// dimension it counts under and the condition on value, whose ? take args.
type countedColumn struct {
	dimension string
	cond      string
	args      []any
}

// julianDayOfEpoch is the Julian day number of 1970-01-01, the form of the
// 'sent' dimension's values.
const julianDayOfEpoch = 2440588

// dayValue is the 'sent' dimension's value of the UTC day starting at t.
func dayValue(t time.Time) string {
	days := t.Unix() / 86400
	if t.Unix() < 0 && t.Unix()%86400 != 0 {
		days-- // floor, not truncation
	}
	return fmt.Sprintf("%010d", days+julianDayOfEpoch)
}

// countedAlone returns the column that decides f alone, if any.
func countedAlone(accountID int64, f DriverFilter) (countedColumn, bool) {
	only := func(clear func(*DriverFilter)) bool {
		g := f
		clear(&g)
		where, _ := g.where(accountID)
		return where == "a.account_id = $1"
	}
	switch {
	case only(func(*DriverFilter) {}):
		return countedColumn{dimension: "all", cond: "value = ''"}, true
	case certificationConds[f.Certification] != "" && only(func(g *DriverFilter) { g.Certification = "" }):
		return equalTo("endorsements", f.Certification), true
	case f.DriverType != "" && only(func(g *DriverFilter) { g.DriverType = "" }):
		return equalTo("driver_type", f.DriverType), true
	case f.State != "" && only(func(g *DriverFilter) { g.State = "" }):
		return equalTo("state", f.State), true
	case f.FirstNameKey != "" && only(func(g *DriverFilter) { g.FirstNameKey = "" }):
		return equalTo("first_name_key", f.FirstNameKey), true
	case f.LastNameKey != "" && only(func(g *DriverFilter) { g.LastNameKey = "" }):
		return equalTo("last_name_key", f.LastNameKey), true
	case f.HasJobApps != nil && only(func(g *DriverFilter) { g.HasJobApps = nil }):
		return equalTo("has_job_apps", fmt.Sprint(*f.HasJobApps)), true
	case f.MinExperience != nil && only(func(g *DriverFilter) { g.MinExperience = nil }):
		return experienceCounted(*f.MinExperience)
	case len(f.Statuses) > 0 && only(func(g *DriverFilter) { g.Statuses = nil }):
		// Migration 0034's counts.
		return countedColumn{dimension: "status", cond: "value = ANY (?::text[])",
			args: []any{pq.StringArray(f.Statuses)}}, true
	case f.JobTitle != "" && only(func(g *DriverFilter) { g.JobTitle = "" }):
		// The title's distinct applicants (migration 0018), compared as
		// job_applications.job_title_lower was written.
		return countedColumn{dimension: "job_title", cond: "value = lower(?)", args: []any{f.JobTitle}}, true
	}
	return countedColumn{}, false
}

func equalTo(dimension, value string) countedColumn {
	return countedColumn{dimension: dimension, cond: "value = ?", args: []any{value}}
}

// experienceCounted is min_experience's count when the filter compares
// whole half-years alone (addMinExperience): a range of the halves counted.
func experienceCounted(m float64) (countedColumn, bool) {
	halves, ok := wholeHalves(m)
	if !ok {
		return countedColumn{}, false
	}
	return countedColumn{dimension: "experience_halves", cond: "value >= ?",
		args: []any{fmt.Sprintf("%04d", halves)}}, true
}

// wholeHalves is the least experience_halves of the applicants with at
// least m years, when that alone decides (addMinExperience compares whole
// half-years only). Halves are never negative: a lower minimum is every
// known one.
func wholeHalves(m float64) (int, bool) {
	c := &conditions{}
	c.addMinExperience(m)
	if len(c.args) != 1 {
		return 0, false
	}
	halves, ok := c.args[0].(int)
	return max(halves, 0), ok
}

// countQuery is the statement that counts the matches of f exactly: from
// application_counts where it has the answer, in applications otherwise.
func countQuery(accountID int64, f DriverFilter, where string, args []any) Query {
	if c, ok := countedAlone(accountID, f); ok {
		return c.query(accountID)
	}
	if q, ok := profileCount(accountID, f); ok {
		return q
	}
	if q, ok := statusProfileCount(accountID, f); ok {
		return q
	}
	if q, ok := titleProfileCount(accountID, f); ok {
		return q
	}
	if q, ok := sentRangeCount(accountID, f); ok {
		return q
	}
	if radiusCounted(accountID, f) {
		sql, args := radiusCountSQL(accountID, *f.Radius, f.DriverType, f.HasJobApps)
		return Query{SQL: `SELECT ` + sql, Args: args}
	}
	// Counted in applications, from the index of the most selective
	// filter, which holds the columns the others test (migration 0022).
	// Serial: on two cores, a parallel count of the 250,000 index entries
	// of driver_type=Student with start_date and has_job_apps took 86-184
	// ms where one process took 34 ms, at 1,000,000 applications. The
	// matches of an e-mail or a phone are a handful, planned serial
	// anyway: the transaction's round trips would be most of their cost.
	handful := f.EmailKey != "" || f.PhoneDigits != ""
	return Query{SQL: `SELECT count(*) FROM applications a WHERE ` + where, Args: args, Serial: !handful}
}

// radiusCounted reports whether the location counts hold the matches of
// f: a radius, alone or with a driver type or job applications (or both).
func radiusCounted(accountID int64, f DriverFilter) bool {
	if f.Radius == nil {
		return false
	}
	g := f
	g.Radius, g.DriverType, g.HasJobApps = nil, "", nil
	where, _ := g.where(accountID)
	return where == "a.account_id = $1"
}

// radiusCountSQL is the expression of the number of the account's
// applicants within r, of the driver type and with the job applications
// given (neither when empty and nil), with its arguments from $1 (the
// account): the list's own box and circle, on each centroid once. The
// radius alone reads application_location_counts, a row a centroid;
// with either of the others, application_location_profile_counts, which
// counts each centroid's applicants by both.
func radiusCountSQL(accountID int64, r Radius, driverType string, hasJobApps *bool) (string, []any) {
	c := &conditions{}
	c.add("a.account_id = ?", accountID)
	c.addRadius(r)
	table := "application_location_counts"
	if driverType != "" || hasJobApps != nil {
		table = "application_location_profile_counts"
		c.addIfSet("a.driver_type = ?", driverType)
		addIfGiven(c, "a.has_job_apps = ?", hasJobApps)
	}
	return `(SELECT coalesce(sum(n), 0) FROM ` + table + ` a WHERE ` +
		strings.Join(c.conds, " AND ") + `)::bigint`, c.args
}

// titleProfileCount counts a job title with state, driver type or job
// applications (any of them) from job_title_profile_counts (migration
// 0027): the sum of the title's rows of that profile.
func titleProfileCount(accountID int64, f DriverFilter) (Query, bool) {
	g := f
	g.JobTitle, g.State, g.DriverType, g.HasJobApps = "", "", "", nil
	if where, _ := g.where(accountID); f.JobTitle == "" || where != "a.account_id = $1" {
		return Query{}, false
	}
	c := &conditions{}
	c.add("account_id = ?", accountID)
	// Compared as job_applications.job_title_lower was written.
	c.add("job_title_lower = lower(?)", f.JobTitle)
	c.addIfSet("state = ?", f.State)
	c.addIfSet("driver_type = ?", f.DriverType)
	addIfGiven(c, "has_job_apps = ?", f.HasJobApps)
	return Query{SQL: `SELECT coalesce(sum(n), 0)::bigint FROM job_title_profile_counts WHERE ` +
		strings.Join(c.conds, " AND "), Args: c.args}, true
}

// profileCount counts a combination of the filters application_profile_counts
// keeps (migration 0022): state, driver type, job applications, a minimum
// of whole half-years of experience and one of the certifications it has
// a bit for. It is the sum of the combinations that match, a few thousand
// rows at most, where a count in applications visits each match.
func profileCount(accountID int64, f DriverFilter) (Query, bool) {
	g := f
	g.State, g.DriverType, g.HasJobApps, g.MinExperience, g.Certification = "", "", nil, nil, ""
	if where, _ := g.where(accountID); where != "a.account_id = $1" {
		return Query{}, false
	}
	c := &conditions{}
	c.add("account_id = ?", accountID)
	c.addIfSet("state = ?", f.State)
	c.addIfSet("driver_type = ?", f.DriverType)
	addIfGiven(c, "has_job_apps = ?", f.HasJobApps)
	if f.MinExperience != nil {
		halves, ok := wholeHalves(*f.MinExperience)
		if !ok {
			return Query{}, false
		}
		// Unknown experience is -1 there, below any bound wholeHalves gives.
		c.add("experience_halves >= ?", halves)
	}
	if f.Certification != "" {
		bit, ok := certificationBits[f.Certification]
		if !ok {
			return Query{}, false
		}
		c.add(fmt.Sprintf("endorsements & %d <> 0", bit))
	}
	return Query{SQL: `SELECT coalesce(sum(n), 0)::bigint FROM application_profile_counts WHERE ` +
		strings.Join(c.conds, " AND "), Args: c.args}, true
}

// statusProfileCount counts lead statuses with state, driver type or job
// applications (any of them) from application_status_profile_counts
// (migration 0038): the sum of the statuses' rows of that profile.
func statusProfileCount(accountID int64, f DriverFilter) (Query, bool) {
	g := f
	g.Statuses, g.State, g.DriverType, g.HasJobApps = nil, "", "", nil
	if where, _ := g.where(accountID); len(f.Statuses) == 0 || where != "a.account_id = $1" {
		return Query{}, false
	}
	c := &conditions{}
	c.add("account_id = ?", accountID)
	c.add("status = ANY (?::text[])", pq.StringArray(f.Statuses))
	c.addIfSet("state = ?", f.State)
	c.addIfSet("driver_type = ?", f.DriverType)
	addIfGiven(c, "has_job_apps = ?", f.HasJobApps)
	return Query{SQL: `SELECT coalesce(sum(n), 0)::bigint FROM application_status_profile_counts WHERE ` +
		strings.Join(c.conds, " AND "), Args: c.args}, true
}

// certificationBits are the bits of endorsement_bits (migration 0022).
var certificationBits = map[string]int{"T": 1, "H": 2, "N": 4, "X": 8}

// query sums the column's counts. The dimension is written out, so the
// plan shows which one it reads.
func (c countedColumn) query(accountID int64) Query {
	conds := &conditions{}
	conds.add("account_id = ?", accountID)
	conds.add("dimension = '" + c.dimension + "'")
	conds.add(c.cond, c.args...)
	return Query{SQL: `SELECT coalesce(sum(n), 0)::bigint FROM application_counts WHERE ` + strings.Join(conds.conds, " AND "),
		Args: conds.args}
}

// sentRangeCount counts a date range, alone or with any of state, driver
// type and job applications: the whole UTC days inside it from
// application_counts (the range alone) or application_day_counts (with
// the others), and the rows of the part days at either end, at most a day
// each, through applications_sent_idx. A range within one or two days is
// counted in applications alone.
func sentRangeCount(accountID int64, f DriverFilter) (Query, bool) {
	g := f
	g.SentFrom, g.SentBefore = nil, nil
	g.State, g.DriverType, g.HasJobApps = "", "", nil
	if where, _ := g.where(accountID); where != "a.account_id = $1" || f.SentFrom == nil && f.SentBefore == nil {
		return Query{}, false
	}
	c := &conditions{}
	c.add("account_id = ?", accountID)
	// The other filters, on the days' table and on applications alike.
	c.addIfSet("state = ?", f.State)
	c.addIfSet("driver_type = ?", f.DriverType)
	addIfGiven(c, "has_job_apps = ?", f.HasJobApps)
	others := c.conds[1:]
	table, days := "application_day_counts", append([]string{}, c.conds...)
	dayCond := func(op string, day time.Time) string {
		// The instant, not its text: an RFC 3339 date may be before year 1.
		c.add("day "+op+" (?::timestamptz AT TIME ZONE 'UTC')::date", day)
		return c.conds[len(c.conds)-1]
	}
	if len(others) == 0 {
		table, days = "application_counts", []string{c.conds[0], "dimension = 'sent'"}
		dayCond = func(op string, day time.Time) string {
			c.add("value "+op+" ?", dayValue(day))
			return c.conds[len(c.conds)-1]
		}
	}
	var parts []string
	part := func(from, before time.Time) {
		c.add("a.sent >= ? AND a.sent < ?", from, before)
		parts = append(parts, c.conds[len(c.conds)-1])
	}
	var firstWhole, endWhole time.Time
	if f.SentFrom != nil {
		firstWhole = f.SentFrom.UTC().Truncate(24 * time.Hour)
		if !firstWhole.Equal(*f.SentFrom) {
			firstWhole = firstWhole.Add(24 * time.Hour)
			part(*f.SentFrom, firstWhole)
		}
		days = append(days, dayCond(">=", firstWhole))
	}
	if f.SentBefore != nil {
		endWhole = f.SentBefore.UTC().Truncate(24 * time.Hour)
		if !endWhole.Equal(*f.SentBefore) {
			part(endWhole, *f.SentBefore)
		}
		days = append(days, dayCond("<", endWhole))
	}
	if f.SentFrom != nil && f.SentBefore != nil && !firstWhole.Before(endWhole) {
		return Query{}, false // no whole day between: the rows are few
	}
	sql := `SELECT (SELECT coalesce(sum(n), 0) FROM ` + table + ` WHERE ` + strings.Join(days, " AND ") + `)::bigint`
	for _, p := range parts {
		conds := []string{"a.account_id = $1", p}
		for _, o := range others {
			conds = append(conds, "a."+o)
		}
		sql += ` + (SELECT count(*) FROM applications a WHERE ` + strings.Join(conds, " AND ") + `)`
	}
	return Query{SQL: sql, Args: c.args}, true
}

// compactCountsSQL folds an account's rows of application_counts (and of
// application_location_counts, application_profile_counts,
// application_day_counts, application_location_profile_counts,
// job_title_profile_counts, application_status_profile_counts and
// job_facet_counts) into one per
// value, each in one statement:
// for each value with more than one row, it deletes the committed rows it
// sees and inserts their sum, so readers see either. Values already folded
// are only read, not rewritten, so an account with many distinct names or
// days pays for the values written since the last fold. Rows of
// transactions still running are not seen and stay; a row another fold
// deleted is skipped, so none is counted twice.
var compactCountsSQL = []string{
	`WITH many AS (SELECT dimension, value FROM application_counts WHERE account_id = $1
	                GROUP BY dimension, value HAVING count(*) > 1),
	gone AS (DELETE FROM application_counts c USING many m
	          WHERE c.account_id = $1 AND c.dimension = m.dimension AND c.value = m.value
	      RETURNING c.dimension, c.value, c.n)
	INSERT INTO application_counts (account_id, dimension, value, n)
	SELECT $1, dimension, value, sum(n) FROM gone GROUP BY dimension, value HAVING sum(n) <> 0`,
	`WITH many AS (SELECT latitude, longitude FROM application_location_counts WHERE account_id = $1
	                GROUP BY latitude, longitude HAVING count(*) > 1),
	gone AS (DELETE FROM application_location_counts c USING many m
	          WHERE c.account_id = $1 AND c.latitude = m.latitude AND c.longitude = m.longitude
	      RETURNING c.latitude, c.longitude, c.n)
	INSERT INTO application_location_counts (account_id, latitude, longitude, n)
	SELECT $1, latitude, longitude, sum(n) FROM gone GROUP BY latitude, longitude HAVING sum(n) <> 0`,
	`WITH many AS (SELECT state, driver_type, has_job_apps, experience_halves, endorsements
	                 FROM application_profile_counts WHERE account_id = $1
	                GROUP BY 1, 2, 3, 4, 5 HAVING count(*) > 1),
	gone AS (DELETE FROM application_profile_counts c USING many m
	          WHERE c.account_id = $1 AND (c.state, c.driver_type, c.has_job_apps, c.experience_halves, c.endorsements) =
	                (m.state, m.driver_type, m.has_job_apps, m.experience_halves, m.endorsements)
	      RETURNING c.state, c.driver_type, c.has_job_apps, c.experience_halves, c.endorsements, c.n)
	INSERT INTO application_profile_counts (account_id, state, driver_type, has_job_apps, experience_halves, endorsements, n)
	SELECT $1, state, driver_type, has_job_apps, experience_halves, endorsements, sum(n)
	  FROM gone GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(n) <> 0`,
	`WITH many AS (SELECT day, state, driver_type, has_job_apps
	                 FROM application_day_counts WHERE account_id = $1
	                GROUP BY 1, 2, 3, 4 HAVING count(*) > 1),
	gone AS (DELETE FROM application_day_counts c USING many m
	          WHERE c.account_id = $1 AND (c.day, c.state, c.driver_type, c.has_job_apps) =
	                (m.day, m.state, m.driver_type, m.has_job_apps)
	      RETURNING c.day, c.state, c.driver_type, c.has_job_apps, c.n)
	INSERT INTO application_day_counts (account_id, day, state, driver_type, has_job_apps, n)
	SELECT $1, day, state, driver_type, has_job_apps, sum(n)
	  FROM gone GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0`,
	`WITH many AS (SELECT latitude, longitude, driver_type, has_job_apps
	                 FROM application_location_profile_counts WHERE account_id = $1
	                GROUP BY 1, 2, 3, 4 HAVING count(*) > 1),
	gone AS (DELETE FROM application_location_profile_counts c USING many m
	          WHERE c.account_id = $1 AND (c.latitude, c.longitude, c.driver_type, c.has_job_apps) =
	                (m.latitude, m.longitude, m.driver_type, m.has_job_apps)
	      RETURNING c.latitude, c.longitude, c.driver_type, c.has_job_apps, c.n)
	INSERT INTO application_location_profile_counts (account_id, latitude, longitude, driver_type, has_job_apps, n)
	SELECT $1, latitude, longitude, driver_type, has_job_apps, sum(n)
	  FROM gone GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0`,
	`WITH many AS (SELECT job_title_lower, state, driver_type, has_job_apps
	                 FROM job_title_profile_counts WHERE account_id = $1
	                GROUP BY 1, 2, 3, 4 HAVING count(*) > 1),
	gone AS (DELETE FROM job_title_profile_counts c USING many m
	          WHERE c.account_id = $1 AND (c.job_title_lower, c.state, c.driver_type, c.has_job_apps) =
	                (m.job_title_lower, m.state, m.driver_type, m.has_job_apps)
	      RETURNING c.job_title_lower, c.state, c.driver_type, c.has_job_apps, c.n)
	INSERT INTO job_title_profile_counts (account_id, job_title_lower, state, driver_type, has_job_apps, n)
	SELECT $1, job_title_lower, state, driver_type, has_job_apps, sum(n)
	  FROM gone GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0`,
	`WITH many AS (SELECT status, state, driver_type, has_job_apps
	                 FROM application_status_profile_counts WHERE account_id = $1
	                GROUP BY 1, 2, 3, 4 HAVING count(*) > 1),
	gone AS (DELETE FROM application_status_profile_counts c USING many m
	          WHERE c.account_id = $1 AND (c.status, c.state, c.driver_type, c.has_job_apps) =
	                (m.status, m.state, m.driver_type, m.has_job_apps)
	      RETURNING c.status, c.state, c.driver_type, c.has_job_apps, c.n)
	INSERT INTO application_status_profile_counts (account_id, status, state, driver_type, has_job_apps, n)
	SELECT $1, status, state, driver_type, has_job_apps, sum(n)
	  FROM gone GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0`,
	`WITH many AS (SELECT facet, sample, value FROM job_facet_counts WHERE account_id = $1
	                GROUP BY 1, 2, 3 HAVING count(*) > 1),
	gone AS (DELETE FROM job_facet_counts c USING many m
	          WHERE c.account_id = $1 AND (c.facet, c.sample, c.value) = (m.facet, m.sample, m.value)
	      RETURNING c.facet, c.sample, c.value, c.n)
	INSERT INTO job_facet_counts (account_id, facet, sample, value, n)
	SELECT $1, facet, sample, value, sum(n) FROM gone GROUP BY 1, 2, 3, 4 HAVING sum(n) <> 0`,
}

// foldPlanSettings keeps the folds' plans off the count tables'
// statistics. A fold runs right after bulk writes, before anyone analyzed
// what they added: an account the statistics have not seen has, to the
// planner, a row or two, and it joined the account's rows to their groups
// by a nested loop over a sequential scan, once per group. Folding 18,000
// rows of a new account's application_profile_counts took 100 s that way
// (the first drivers import of bench scenario 9), against 60 ms by its
// index. Without sequential scans each side is read by the account's
// index; without nested loops the groups are hashed once: a nested loop
// over the account's rows grouped them again for each row, and the same
// fold of 57,816 rows in 6,298 groups ran for over 4 minutes. A hash join
// reads the account's rows a second time, which any statistics allow.
const foldPlanSettings = `SET LOCAL enable_seqscan = off; SET LOCAL enable_nestloop = off`

// countCompactionLock is the class (first key) of the advisory locks that
// let one fold of an account's counts run at a time across every replica
// (the account id is the second key): two folds deleting the same rows in
// different orders could deadlock, and the second has nothing to do.
const countCompactionLock = 18_0001

// CompactApplicationCounts folds the account's count rows: each write
// statement adds rows, and a count sums them all. When another fold of the
// account is running, it returns at once: that one folds the same rows.
func (s *Store) CompactApplicationCounts(ctx context.Context, accountID int64) error {
	_, err := s.compactApplicationCounts(ctx, accountID)
	return err
}

// compactApplicationCounts is CompactApplicationCounts, saying also
// whether it folded: false when another fold held the lock.
func (s *Store) compactApplicationCounts(ctx context.Context, accountID int64) (folded bool, err error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("compact application counts: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // committed below when it matters
	var locked bool
	if err := tx.GetContext(ctx, &locked, `SELECT pg_try_advisory_xact_lock($1, ($2::bigint & 2147483647)::int4)`,
		countCompactionLock, accountID); err != nil {
		return false, fmt.Errorf("compact application counts: %w", err)
	}
	if !locked {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, foldPlanSettings); err != nil {
		return false, fmt.Errorf("compact application counts: %w", err)
	}
	for _, q := range compactCountsSQL {
		if _, err := tx.ExecContext(ctx, q, accountID); err != nil {
			return false, fmt.Errorf("compact application counts: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("compact application counts: %w", err)
	}
	return true, nil
}

// countCompactionEvery is how often the fold loop runs, and so how often
// at most it folds an account: a count then sums at most the rows of the
// statements of about that long.
const countCompactionEvery = time.Second

// compactions remembers the accounts this process wrote applications to
// since their last fold, and when it last folded each. The writers only
// note an account; the fold loop (StartCountFolding) does the folding, so
// no intake waits for it.
type compactions struct {
	mu      sync.Mutex
	written map[int64]bool
	last    map[int64]time.Time
}

// note remembers that the accounts were written to.
func (c *compactions) note(accountIDs ...int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.written == nil {
		c.written = map[int64]bool{}
	}
	for _, id := range accountIDs {
		c.written[id] = true
	}
}

// take returns the written accounts whose turn has come at now (every
// written account when all is set) and forgets them until written again.
func (c *compactions) take(now time.Time, all bool) []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last = map[int64]time.Time{}
	}
	var ids []int64
	for id := range c.written {
		if all || now.Sub(c.last[id]) >= countCompactionEvery {
			ids = append(ids, id)
			delete(c.written, id)
			c.last[id] = now
		}
	}
	return ids
}

// FoldWrittenCounts folds now the counts of every account this process
// wrote applications to since their last fold, and refreshes the
// statistics after bulk writes (AnalyzeAfterBulkWrites): for a command
// that writes and exits (drivers import), and the fold loop's last round.
// A failure only leaves more rows for a later fold, so it is logged, not
// returned.
func (s *Store) FoldWrittenCounts(ctx context.Context) {
	s.foldCounts(ctx, s.compactions.take(time.Now(), true))
	s.AnalyzeAfterBulkWrites(ctx)
}

// foldCounts folds each account's counts. An account whose fold failed,
// or was left to another process's fold (which started before this
// process's latest rows and so may leave them), is noted again for the
// next round: a count keeps summing only about a second of rows.
func (s *Store) foldCounts(ctx context.Context, accountIDs []int64) {
	if len(accountIDs) > 0 && !slices.Contains(accountIDs, everyAccount) {
		// Every account's job facets are counted under account 0 too
		// (migration 0036), whichever account was written.
		accountIDs = append(accountIDs, everyAccount)
	}
	for _, id := range accountIDs {
		folded, err := s.compactApplicationCounts(ctx, id)
		if err != nil {
			slog.WarnContext(ctx, "application counts not compacted", "account", id, "error", err)
		}
		if !folded {
			s.compactions.note(id)
		}
	}
}

// lastFoldWithin bounds the fold loop's last round: a server shutting
// down with its database unreachable must not wait on a connection
// attempt per account. Rows left unfolded still sum to the right counts,
// and are folded after the account's next write.
const lastFoldWithin = 5 * time.Second

// StartCountFolding folds, every countCompactionEvery, the counts of the
// accounts written to since their last fold, off the writers' requests,
// and refreshes the statistics after bulk writes.
// stop ends the loop after a last round for what was written until then,
// and returns when it has. A round under way when stop is called is given
// lastFoldWithin to end rather than being cancelled at once: a cancelled
// statement sends a cancel request through the pooler, and the server
// exits right after, closing it half done, which PgBouncer 1.18 answers by
// crashing (pgbouncer#801). Replicas each fold what they wrote; the
// advisory lock of CompactApplicationCounts keeps two folds of an account
// from running at once.
func (s *Store) StartCountFolding(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	// rounds ends lastFoldWithin after stop: a round under way then has
	// that long to finish; until stop, rounds have no bound of their own.
	rounds, cancelRounds := context.WithCancel(context.WithoutCancel(ctx))
	context.AfterFunc(ctx, func() { time.AfterFunc(lastFoldWithin, cancelRounds) })
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(countCompactionEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				last, cancel := context.WithTimeout(context.WithoutCancel(ctx), lastFoldWithin)
				s.FoldWrittenCounts(last)
				cancel()
				return
			case now := <-tick.C:
				s.foldCounts(rounds, s.compactions.take(now, false))
				s.AnalyzeAfterBulkWrites(rounds)
			}
		}
	}()
	return func() { cancel(); <-done; cancelRounds() }
}
