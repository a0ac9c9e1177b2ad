// Package search is the job search of the board's own services
// (docs/api.md, Job search): the active jobs of every account, by words,
// distance and filters, with facets. It reads the database the jobs are
// written to, with no index of its own to lag behind, so a job is found as
// soon as its post is answered and gone as soon as its delete is; with a
// read replica (JOBBOARD_READ_DATABASE_URL), as soon as the replica has
// replayed them.
package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/internal/rules"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/pagetoken"
	"github.com/truckjobs/jobboard/server/store"
)

// The request's bounds (docs/api.md, Job search).
const (
	MaxQueryLength     = 200
	MaxListValues      = 10
	DefaultRadiusMiles = 50
	MaxRadiusMiles     = 500
	MaxPostedWithin    = 365
	DefaultPageSize    = 20
	MaxPageSize        = 100
)

// Order is the order of the results.
type Order int

// The orders; OrderDefault is RELEVANCE with a query, POSTED without.
const (
	OrderDefault Order = iota
	OrderRelevance
	OrderDistance
	OrderPosted
	OrderPay
)

// Facet is a field whose values a search counts.
type Facet = store.JobFacet

// The facets.
const (
	FacetDriverType     = store.FacetDriverType
	FacetFreightType    = store.FacetFreightType
	FacetRouteType      = store.FacetRouteType
	FacetEmploymentType = store.FacetEmploymentType
	FacetPayFrequency   = store.FacetPayFrequency
	FacetState          = store.FacetState
	FacetLicenseClass   = store.FacetLicenseClass
)

// Request is a search in domain terms. The adapter has read the closed
// vocabularies; the rest is checked here.
type Request struct {
	Query            string
	PostalCode       string
	RadiusMiles      int32 // 0 is DefaultRadiusMiles
	DriverTypes      []domain.DriverType
	FreightTypes     []domain.FreightType
	RouteTypes       []domain.RouteType
	EmploymentTypes  []domain.EmploymentType
	PayFrequencies   []domain.PayFrequency
	States           []string
	LicenseClass     domain.LicenseClass // the driver's; "" is none given
	ExcludeTWICOnly  bool
	MinPayCents      *int64
	PostedWithinDays int32
	AccountIDs       []int64
	Order            Order
	PageSize         int32
	PageToken        string
	Facets           []Facet
}

// Result is one job found.
type Result struct {
	Job         domain.Job
	AccountID   int64
	AccountName string
	// DistanceMiles is the distance from the postal code's centroid, to a
	// tenth of a mile; nil without a postal code.
	DistanceMiles *float64
	// Highlights are up to three fragments of the title and description
	// around the matched words, in <b>...</b>; none without a query.
	Highlights []string
}

// Page is a page of results with the whole match's size and facets.
type Page struct {
	Results []Result
	// TotalSize is how many jobs match.
	TotalSize int64
	// TotalSizeIsEstimate is true when TotalSize (and the facets' counts)
	// are estimates; a search that counted exactly says false.
	TotalSizeIsEstimate bool
	// Facets holds the counts of each facet asked for, in the order asked.
	Facets []FacetCounts
	// NextPageToken is the page_token of the following page; "" on the last.
	NextPageToken string
}

// FacetCounts are the counts of one facet's values, highest first.
type FacetCounts struct {
	Facet  Facet
	Values []store.FacetCount
}

// Service answers searches over the store.
type Service struct {
	store  *store.Store
	tokens pagetoken.Signer
	now    func() time.Time
}

// New returns the search over st, signing page tokens with tokens.
func New(st *store.Store, tokens pagetoken.Signer, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: st, tokens: tokens, now: now}
}

// tokenScope names the search list among the lists whose tokens the
// signer signs.
const tokenScope = "jobsearch"

// Search answers a page of the jobs that match r.
func (s *Service) Search(ctx context.Context, r Request) (Page, error) {
	q, err := s.query(ctx, r)
	if err != nil {
		return Page{}, err
	}
	scope, err := requestScope(r)
	if err != nil {
		return Page{}, call.Internal(ctx, err)
	}
	size := q.Limit
	q.Limit++ // one more tells whether another page follows
	found, err := s.store.SearchJobs(ctx, q)
	if err != nil {
		return Page{}, call.Internal(ctx, err)
	}
	page := Page{TotalSize: found.Total, TotalSizeIsEstimate: found.Estimated}
	for _, f := range q.Facets {
		page.Facets = append(page.Facets, FacetCounts{Facet: f, Values: found.Facets[f]})
	}
	jobs := found.Jobs
	if len(jobs) > size {
		jobs = jobs[:size]
		position, err := json.Marshal(jobs[size-1].Cursor)
		if err != nil {
			return Page{}, call.Internal(ctx, err)
		}
		page.NextPageToken = s.tokens.Encode(0, scope, position)
	}
	for _, j := range jobs {
		res := Result{Job: j.Job, AccountID: j.AccountID, AccountName: j.AccountName, Highlights: matched(j.Highlights)}
		if j.Miles != nil {
			tenths := math.Round(*j.Miles*10) / 10
			res.DistanceMiles = &tenths
		}
		page.Results = append(page.Results, res)
	}
	return page, nil
}

// matched keeps the fragments that show a matched word: ts_headline
// answers the start of the text when the words matched elsewhere (the
// requirements, the city).
func matched(fragments []string) []string {
	var out []string
	for _, f := range fragments {
		if strings.Contains(f, "<b>") {
			out = append(out, strings.TrimSpace(f))
		}
	}
	return out
}

// StoreSearch is the store's search that Search runs for r's first page,
// for a benchmark that explains its statements and counts its matches.
func (s *Service) StoreSearch(ctx context.Context, r Request) (store.JobSearch, error) {
	return s.query(ctx, r)
}

// query checks r and turns it into the store's search: every problem
// of r is InvalidArgument, all named in one answer.
func (s *Service) query(ctx context.Context, r Request) (store.JobSearch, error) {
	q, problems, err := s.check(ctx, r)
	if err != nil {
		return store.JobSearch{}, err
	}
	if len(problems) > 0 {
		return store.JobSearch{}, call.InvalidArgument(problems...)
	}
	if strings.TrimSpace(r.Query) != "" {
		if q.Words, err = s.store.NormalizeJobQuery(ctx, r.Query); err != nil {
			return store.JobSearch{}, call.Internal(ctx, err)
		}
	}
	q.Order = storeOrder(orderOf(r), q.Words)
	return q, nil
}

// Problems are every rule r breaks, each naming its field, for an
// adapter that found problems of its own to answer them all at once.
func (s *Service) Problems(ctx context.Context, r Request) ([]call.FieldViolation, error) {
	_, problems, err := s.check(ctx, r)
	return problems, err
}

// check turns r into the store's search, but for its words and order,
// and finds the rules it breaks: those of its values (problemsOf), a
// postal code of no known ZIP, and a page token not answered for this
// search. err is the store's failure to look the ZIP code up, when that
// is all that stands between r and the search.
func (s *Service) check(ctx context.Context, r Request) (store.JobSearch, []call.FieldViolation, error) {
	problems := problemsOf(r)
	if v := call.PageSizeViolation(r.PageSize, MaxPageSize, "results"); v != nil {
		problems = append(problems, *v)
	}
	size, _ := call.PageSize(max(r.PageSize, 0), DefaultPageSize, MaxPageSize, "results")
	q := store.JobSearch{
		Limit: size, Facets: dedupe(r.Facets), ExcludeTWICOnly: r.ExcludeTWICOnly,
		DriverTypes: domain.Names(r.DriverTypes), FreightTypes: domain.Names(r.FreightTypes),
		RouteTypes: domain.Names(r.RouteTypes), EmploymentTypes: domain.Names(r.EmploymentTypes),
		PayFrequencies: domain.Names(r.PayFrequencies), States: upperCase(r.States),
		AccountIDs: r.AccountIDs, LicenseClasses: driverCanDrive(r.LicenseClass), MinPay: r.MinPayCents,
	}
	if d := r.PostedWithinDays; d > 0 {
		since := s.now().Add(-time.Duration(d) * 24 * time.Hour)
		q.PostedSince = &since
	}
	if wellFormedZIP(r.PostalCode) {
		lat, lon, err := s.store.ZipCentroid(ctx, r.PostalCode)
		switch {
		case errors.Is(err, store.ErrNotFound):
			problems = append(problems, call.FieldValueViolation("postal_code", r.PostalCode, "is not a known US ZIP code"))
		case err != nil && len(problems) == 0:
			return q, nil, call.Internal(ctx, err)
		}
		miles := r.RadiusMiles
		if miles == 0 {
			miles = DefaultRadiusMiles
		}
		q.Near = &store.Radius{Latitude: lat, Longitude: lon, Miles: float64(miles)}
	}
	if after, ok := s.position(r); ok {
		q.After = after
	} else {
		problems = append(problems, call.FieldValueViolation("page_token", r.PageToken,
			"is not a next_page_token answered for this search (the same query, filters and order)"))
	}
	return q, problems, nil
}

// position is where r's page token says the page starts: nil without a
// token; false for a token not answered for a search of r's scope.
func (s *Service) position(r Request) (*store.JobSearchCursor, bool) {
	if r.PageToken == "" {
		return nil, true
	}
	scope, err := requestScope(r)
	if err != nil {
		return nil, false
	}
	raw, err := s.tokens.Decode(r.PageToken, 0, scope)
	var after store.JobSearchCursor
	if err == nil {
		err = json.Unmarshal(raw, &after)
	}
	return &after, err == nil
}

// storeOrder is the store's order for o, where words are the query's
// words once normalized.
func storeOrder(o Order, words string) store.JobSearchOrder {
	switch o {
	case OrderRelevance:
		// A query of stop words alone finds by no word: every job
		// matches it alike, and the ties' order (newest first) is the order.
		if words == "" {
			return store.ByPosted
		}
		return store.ByRelevance
	case OrderDistance:
		return store.ByDistance
	case OrderPay:
		return store.ByPay
	default:
		return store.ByPosted
	}
}

// wellFormedZIP says whether code is five digits, which the ZIP table is
// then asked for (problemsOf names any other code).
func wellFormedZIP(code string) bool {
	return len(code) == 5 && rules.LeadingDigits(code) == 5
}

// orderOf is r's order: as asked, or RELEVANCE with a query and POSTED
// without.
func orderOf(r Request) Order {
	switch {
	case r.Order != OrderDefault:
		return r.Order
	case strings.TrimSpace(r.Query) != "":
		return OrderRelevance
	default:
		return OrderPosted
	}
}

// problemsOf are the rules r breaks, each naming its field, the value and
// the rule (docs/api.md, Job search).
func problemsOf(r Request) []call.FieldViolation {
	var problems []call.FieldViolation
	add := func(field, description string) {
		problems = append(problems, call.FieldViolation{Field: field, Label: field, Description: description})
	}
	bad := func(field, value, rule string) {
		problems = append(problems, call.FieldValueViolation(field, value, rule))
	}

	if n := utf8.RuneCountInString(r.Query); n > MaxQueryLength {
		bad("query", r.Query, fmt.Sprintf("is %d characters long; the most is %d", n, MaxQueryLength))
	}
	for _, l := range []struct {
		field string
		n     int
	}{
		{"driver_types", len(r.DriverTypes)}, {"freight_types", len(r.FreightTypes)}, {"route_types", len(r.RouteTypes)},
		{"employment_types", len(r.EmploymentTypes)}, {"pay_frequencies", len(r.PayFrequencies)},
		{"states", len(r.States)}, {"account_ids", len(r.AccountIDs)},
	} {
		if l.n > MaxListValues {
			add(l.field, fmt.Sprintf("has %d values; the most is %d", l.n, MaxListValues))
		}
	}
	for i, st := range r.States {
		if !domain.IsJobState(strings.ToUpper(st)) {
			bad(fmt.Sprintf("states[%d]", i), st, "is not the USPS code of a state, DC or an inhabited territory")
		}
	}
	for i, id := range r.AccountIDs {
		if id <= 0 {
			bad(fmt.Sprintf("account_ids[%d]", i), fmt.Sprint(id), "is not an account id (a positive integer)")
		}
	}
	if m := r.MinPayCents; m != nil && *m < 0 {
		bad("min_pay_cents", fmt.Sprint(*m), "is negative")
	} else if m != nil && len(r.PayFrequencies) != 1 {
		bad("min_pay_cents", fmt.Sprint(*m),
			fmt.Sprintf("needs exactly one pay_frequencies value, the unit of the amount (%d given)", len(r.PayFrequencies)))
	}
	if d := r.PostedWithinDays; d < 0 || d > MaxPostedWithin {
		bad("posted_within_days", fmt.Sprint(d), fmt.Sprintf("is not a number of days from 1 to %d", MaxPostedWithin))
	}
	switch {
	case r.PostalCode == "" && r.RadiusMiles != 0:
		bad("radius_miles", fmt.Sprint(r.RadiusMiles), "needs a postal_code, the centre of the radius")
	case r.RadiusMiles < 0 || r.RadiusMiles > MaxRadiusMiles:
		bad("radius_miles", fmt.Sprint(r.RadiusMiles), fmt.Sprintf("is not a number of miles from 1 to %d", MaxRadiusMiles))
	}
	if r.PostalCode != "" && !wellFormedZIP(r.PostalCode) {
		bad("postal_code", r.PostalCode, "is not a five-digit ZIP code")
	}
	switch order := orderOf(r); {
	case order == OrderRelevance && strings.TrimSpace(r.Query) == "":
		add("order_by", "RELEVANCE needs a query, the words to rank by")
	case order == OrderDistance && r.PostalCode == "":
		add("order_by", "DISTANCE needs a postal_code, the place to measure from")
	case order == OrderPay && len(r.PayFrequencies) != 1:
		add("order_by", fmt.Sprintf("PAY needs exactly one pay_frequencies value, the unit of the amounts (%d given)", len(r.PayFrequencies)))
	}
	return problems
}

// upperCase is the codes in upper case, as the jobs keep them.
func upperCase(codes []string) []string {
	out := make([]string, len(codes))
	for i, c := range codes {
		out[i] = strings.ToUpper(c)
	}
	return out
}

// driverCanDrive are the classes of the jobs a driver holding class may
// drive (a job asking for no class too): A drives A, B and C; B drives B
// and C; C drives C; a driver with none drives the jobs that need none.
// nil for no class given: no filter.
func driverCanDrive(class domain.LicenseClass) []string {
	switch class {
	case "A":
		return []string{"A", "B", "C", "None"}
	case "B":
		return []string{"B", "C", "None"}
	case "C":
		return []string{"C", "None"}
	case "None":
		return []string{"None"}
	}
	return nil
}

func dedupe[T comparable](in []T) []T {
	var out []T
	for _, v := range in {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// requestScope is what a page token is bound to: everything of r that
// decides the match and its order, whatever order its lists were sent in.
func requestScope(r Request) (string, error) {
	sorted := func(in []string) []string { return slices.Sorted(slices.Values(dedupe(in))) }
	upper := upperCase(r.States)
	ids := slices.Sorted(slices.Values(dedupe(r.AccountIDs)))
	b, err := json.Marshal([]any{
		r.Query, r.PostalCode, r.RadiusMiles,
		sorted(domain.Names(r.DriverTypes)), sorted(domain.Names(r.FreightTypes)), sorted(domain.Names(r.RouteTypes)),
		sorted(domain.Names(r.EmploymentTypes)), sorted(domain.Names(r.PayFrequencies)), sorted(upper),
		r.LicenseClass, r.ExcludeTWICOnly, r.MinPayCents, r.PostedWithinDays, ids, r.Order,
	})
	return tokenScope + string(b), err
}
