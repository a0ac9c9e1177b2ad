package store

import (
	"cmp"
	"context"
	"errors"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// MigrateUpTo applies the embedded migrations up to version upTo only.
func (s *Store) MigrateUpTo(ctx context.Context, upTo int) ([]string, error) {
	return s.migrate(ctx, upTo)
}

// ReplicaFreshWithin is the read database's freshness check, bounded by
// within.
func ReplicaFreshWithin(db *sqlx.DB, within time.Duration) error {
	return replicaFreshWithin(db, within)
}

// UnansweredWithin is how the freshness check reports an error of a
// statement under ctx, bounded by within.
func UnansweredWithin(ctx context.Context, within time.Duration, err error) error {
	return unansweredWithin(ctx, within, err)
}

// SetReadClock sets the clock the read database's retries go by.
func (s *Store) SetReadClock(now func() time.Time) { s.reads.now = now }

// JobByIDQuery is the query of Job, for the benchmark that runs it the
// ways the store could.
var JobByIDQuery = jobSelect + ` WHERE account_id = $1 AND id = $2 AND deleted_at IS NULL`

// JobScanDest is where each column of JobByIDQuery goes in j, as the
// store scans it.
func JobScanDest(j *Job) []any { return jobScanDest(j) }

// FoldsDue takes the accounts the count fold loop would fold in its next
// round, as that round would.
func (s *Store) FoldsDue() []int64 { return s.compactions.take(time.Now(), true) }

// ForcePrepared turns the prepared hot reads on whatever Open decided, to
// show that a connection that is not direct still prepares nothing.
func (s *Store) ForcePrepared() { s.prepared.on = true }

// CompareRoute is the verdict on one connection, from the socket's two
// ends and the server's view of them.
func CompareRoute(local, remote, server, client netip.AddrPort) Route {
	return compareRoute(local, remote, serverSide{server: server, client: client})
}

// The queries of the jobs list's pages, whose plans a test reads, with
// their arguments after the account's id: a page of ListJobs' largest, and
// one of the whole list's largest.
var JobsListQueries = []struct {
	Name, Query string
	Args        []any
}{
	{"EachJobOfPage", listJobsPage, []any{0, 1000, 2 << 20}},
	{"EachJobOfPage of the whole list", listJobsPage, []any{0, 10_000, 2<<20 + 2<<20/4}},
}

// SetBeforeCountBackfill sets the hook run before each account's counts
// are filled after migration 0015; nil removes it.
func SetBeforeCountBackfill(f func(ctx context.Context, accountID int64)) { beforeCountBackfill = f }

// SetBeforeStatusCountBackfill sets the hook run before each account's
// status counts are filled after migration 0034; nil removes it.
func SetBeforeStatusCountBackfill(f func(ctx context.Context, accountID int64)) {
	beforeStatusCountBackfill = f
}

// SetBeforeJobTitleBackfill sets the hook run before each account's title
// counts are filled after migration 0018; nil removes it.
func SetBeforeJobTitleBackfill(f func(ctx context.Context, accountID int64)) {
	beforeJobTitleBackfill = f
}

// InRetriedSQLTx is inRetriedTx, for tests whose statements are their own
// (a deadlock between two of them, deletes racing the intake).
func (s *Store) InRetriedSQLTx(ctx context.Context, op string, fn func(tx *sqlx.Tx) error) error {
	return s.inRetriedTx(ctx, op, fn)
}

// UpsertPlans are the plans of the statements with which UpsertJobs would
// find the account's stored jobs among jobs and update them, and with
// which UpsertJobsWhileChecked would find those sent as last posted.
func (s *Store) UpsertPlans(ctx context.Context, accountID int64, jobs []JobFields) (lookup, update, digests string, err error) {
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		byRef, err := existingJobs(ctx, tx, accountID, referenceNumbers(jobs))
		if err != nil {
			return err
		}
		p := planUpsert(Checked{Jobs: jobs}, byRef, 0, len(jobs))
		if lookup, err = explain(ctx, tx, existingJobsQuery, accountID, pq.StringArray(referenceNumbers(jobs))); err != nil {
			return err
		}
		update, err = explain(ctx, tx, updateJobBatch,
			p.updateArrays.params(time.Now().Format(time.DateOnly), nil, pq.Array(p.updateIDs))...)
		if err != nil {
			return err
		}
		refs := referenceNumbers(jobs)
		packed, err := packDigests(make([][]byte, len(refs)))
		if err != nil {
			return err
		}
		digests, err = explain(ctx, tx, sameInputsQuery, accountID, pq.StringArray(refs), packed)
		return err
	})
	return lookup, update, digests, err
}

// IntakeJobLookup is the plan of the statement with which an application
// finds the jobs it names, the references it found, sorted, and whether
// another transaction's FOR UPDATE NOWAIT on the account's jobs with refs
// was refused while the lookup's transaction held them.
func (s *Store) IntakeJobLookup(ctx context.Context, accountID int64, refs []string) (plan string, found []string, heldBack bool, err error) {
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		if plan, err = explain(ctx, tx, appliedJobsQuery, accountID, pq.StringArray(refs)); err != nil {
			return err
		}
		if err := tx.SelectContext(ctx, &found, `SELECT f.reference_number FROM (`+appliedJobsQuery+`) f
			ORDER BY f.reference_number COLLATE "C"`, accountID, pq.StringArray(refs)); err != nil {
			return err
		}
		_, err := s.db.ExecContext(ctx, `SELECT id FROM jobs
			WHERE account_id = $1 AND reference_number = ANY($2::text[]) FOR UPDATE NOWAIT`, accountID, pq.StringArray(refs))
		var pqErr *pq.Error
		if heldBack = errors.As(err, &pqErr) && pqErr.Code == "55P03"; heldBack {
			err = nil
		}
		return err
	})
	return plan, found, heldBack, err
}

// TitlePages lists the page of f with its job title written both ways,
// as a semi-join and as the array of the title's applicants, and reports
// whether DriverListQueries, and so ListDrivers, writes it as the semi-join.
func (s *Store) TitlePages(ctx context.Context, accountID int64, f DriverFilter) (joined, array []DriverListItem, joins bool, err error) {
	if joins, err = titleJoins(ctx, s.db, accountID, f); err != nil {
		return nil, nil, false, err
	}
	joined, array, err = s.pagesBothWays(ctx, accountID, f, func(g *DriverFilter, yes bool) { g.titleJoined = yes })
	return joined, array, joins, err
}

// RadiusPages lists the page of f with its radius read both ways, by
// walking the order and from the radius's box, and reports whether
// DriverListQueries, and so ListDrivers, walks it.
func (s *Store) RadiusPages(ctx context.Context, accountID int64, f DriverFilter) (walked, boxed []DriverListItem, walks bool, err error) {
	if walks, err = radiusWalks(ctx, s.db, accountID, f); err != nil {
		return nil, nil, false, err
	}
	walked, boxed, err = s.pagesBothWays(ctx, accountID, f, func(g *DriverFilter, yes bool) { g.radiusWalked = yes })
	return walked, boxed, walks, err
}

// pagesBothWays lists the page of f with a form of its statements set
// (form(g, true)) and not.
func (s *Store) pagesBothWays(ctx context.Context, accountID int64, f DriverFilter,
	form func(g *DriverFilter, yes bool)) (with, without []DriverListItem, err error) {
	for _, way := range []struct {
		yes   bool
		items *[]DriverListItem
	}{{true, &with}, {false, &without}} {
		g := f
		form(&g, way.yes)
		page, count := driverListStatements(accountID, g)
		if *way.items, _, err = listDrivers(ctx, s.db, page, count); err != nil {
			return nil, nil, err
		}
	}
	return with, without, nil
}

func explain(ctx context.Context, tx *sqlx.Tx, query string, args ...any) (string, error) {
	var plan []string
	err := tx.SelectContext(ctx, &plan, "EXPLAIN "+query, args...)
	return strings.Join(plan, "\n"), err
}

// FoldPlans are the plans of the fold's statements for the account, under
// the fold's settings, one text each.
func (s *Store) FoldPlans(ctx context.Context, accountID int64) ([]string, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck // read only
	if _, err := tx.ExecContext(ctx, foldPlanSettings); err != nil {
		return nil, err
	}
	var plans []string
	for _, q := range compactCountsSQL {
		var lines []string
		if err := tx.SelectContext(ctx, &lines, "EXPLAIN "+q, accountID); err != nil {
			return nil, err
		}
		plans = append(plans, strings.Join(lines, "\n"))
	}
	return plans, nil
}

// JobsPage is one page of an account's active jobs.
type JobsPage struct {
	Jobs []Job
	PageEnd
}

// ListJobsPage is the page EachJobOfPage reads, collected.
func (s *Store) ListJobsPage(ctx context.Context, accountID, after int64, limit, maxBytes int) (JobsPage, error) {
	// Collected into a slice made once: a list is read a page at a time,
	// and sqlx's Select would grow the slice, and copy every row into it,
	// for each page again.
	page := JobsPage{Jobs: make([]Job, 0, limit)}
	end, err := s.EachJobOfPage(ctx, accountID, after, limit, maxBytes, func(j *Job) error {
		page.Jobs = append(page.Jobs, *j)
		return nil
	})
	page.PageEnd = end
	return page, err
}

// SearchFilterConditions are the conditions of q's filters on jobs j, with
// NULL in place of each argument.
func SearchFilterConditions(q JobSearch) []string {
	c := &conditions{}
	q.addFilters(c, noFacet)
	conds := make([]string, len(c.conds))
	for i, cond := range c.conds {
		conds[i] = argPlace.ReplaceAllString(cond, "NULL")
	}
	return conds
}

var argPlace = regexp.MustCompile(`\$[0-9]+`)

// SetSampleHitsToEstimate sets the fewest matches in the search's sample
// that an estimate is made from, until the test ends.
func SetSampleHitsToEstimate(t testing.TB, n int64) {
	old := sampleHitsToEstimate
	sampleHitsToEstimate = n
	t.Cleanup(func() { sampleHitsToEstimate = old })
}

// SetRankedMatches sets how many of the newest matches the search ranks
// by relevance, until the test ends.
func SetRankedMatches(t testing.TB, n int) {
	old := rankedMatches
	rankedMatches = n
	t.Cleanup(func() { rankedMatches = old })
}

// SearchSamples are the search's samples: the share of jobs each job of a
// sample stands for, and the condition that keeps its jobs j.
func SearchSamples() (shares []int64, froms, conditions []string) {
	for _, s := range samples {
		shares, conditions = append(shares, s.share), append(conditions, s.condition)
		froms = append(froms, cmp.Or(s.from, "job_search_sample j"))
	}
	return shares, froms, conditions
}

// Sample8InJobs keeps the jobs of the sample of 1 in 8 read from jobs.
const Sample8InJobs = sample8InJobs

// Settles says whether m matches of n sampled jobs of a value settle its
// estimate (jobfacets.go).
func Settles(m, n int64) bool { return settles(m, n) }

// WorthReading says whether the first sample of nextShares is worth
// reading whole for the open values of the driver type facet (value:
// share of its sampled jobs seen to match), given each sample's jobs by
// value (jobfacets.go).
func WorthReading(open map[string]float64, nextShares []int64, inSample map[int64]map[string]int64) bool {
	values := map[facetValue]float64{}
	for v, p := range open {
		values[facetValue{FacetDriverType, v}] = p
	}
	var next []sample
	for _, share := range nextShares {
		next = append(next, sample{share: share})
	}
	worth, _ := worthReading(values, next, func(s sample) (valueCounts, error) {
		return valueCounts{FacetDriverType: inSample[s.share]}, nil
	})
	return worth
}
