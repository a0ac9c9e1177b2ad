package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"golang.org/x/sync/errgroup"
)

// DriverFilter selects and orders an account's applicants. Values are
// already validated and in the form the columns hold (lower case, digits).
type DriverFilter struct {
	Certification string // T, H, N or X
	DriverType    string
	EmailKey      string
	PhoneDigits   string
	// MatchNothing is set for a filter value that can match no driver, such
	// as an invalid e-mail address: the list is empty, not an error.
	MatchNothing  bool
	SentFrom      *time.Time // inclusive
	SentBefore    *time.Time // exclusive
	FirstNameKey  string
	LastNameKey   string
	HasJobApps    *bool
	JobTitle      string
	Radius        *Radius
	MinExperience *float64
	State         string
	// Statuses are lead statuses (domain.LeadStatus), distinct, in a
	// fixed order; none is no filter.
	Statuses      []string
	Sort          string // id, name, state, driver_type or sent
	Descending    bool
	Limit, Offset int
	// After, when set, starts the page after that row of the order
	// (keyset paging): a page then costs the same at any depth. Offset is
	// not used with it.
	After *DriverCursor
	// titleJoined writes the job title as a semi-join, which the planner
	// weighs with the title's statistics, instead of an array of its
	// applicants, which it takes for a handful. DriverListQueries sets it
	// for a title with other filters, and for a title alone where it holds
	// enough of the account (titleJoins).
	titleJoined bool
	// radiusWalked leaves the radius's bands of latitude out of the
	// conditions, so that the page walks the order's index rather than
	// reading the radius's box. DriverListQueries sets it where the radius
	// holds enough of the account (radiusWalks). In state order it leaves
	// out the box as well: that page is read a state at a time
	// (radiusByStatePage).
	radiusWalked bool
}

// DriverCursor is a row's place in a sort order: the values of the sort's
// columns, as text, and the driver id that breaks ties.
type DriverCursor struct {
	Keys []string `json:"k,omitempty"`
	ID   int64    `json:"id"`
}

// Radius is a great-circle distance filter around a point.
type Radius struct {
	Latitude, Longitude, Miles float64
}

// EarthRadiusMiles is the mean Earth radius the distance filter uses.
const EarthRadiusMiles = 3958.8

// DriverListItem is one row of the list.
type DriverListItem struct {
	ID int64 `db:"id"`
	DriverBasics
	Sent       time.Time `db:"sent"`
	HasJobApps bool      `db:"has_job_apps"`
	// Status is the account's lead status of the driver.
	Status string `db:"status"`
	// sortKeys are the row's values of the sort columns, as text, for
	// CursorOf.
	SortKey1 sql.NullString `db:"sort_key_1"`
	SortKey2 sql.NullString `db:"sort_key_2"`
}

// CursorOf is the place of a listed row in the order it was listed in.
func CursorOf(item DriverListItem) DriverCursor {
	c := DriverCursor{ID: item.ID}
	for _, k := range []sql.NullString{item.SortKey1, item.SortKey2} {
		if k.Valid {
			c.Keys = append(c.Keys, k.String)
		}
	}
	return c
}

// sortColumnTypes are the types of the sort columns that are not text,
// which a cursor's text values are cast back to.
var sortColumnTypes = map[string]string{"a.sent": "timestamptz"}

var sortColumns = map[string][]string{
	"id":          nil,
	"name":        {"a.last_name_key", "a.first_name_key"},
	"state":       {"a.state"},
	"driver_type": {"a.driver_type"},
	"sent":        {"a.sent"},
}

// certificationConds are the conditions of the partial indexes of migration
// 0005, one per code. They are written out, not bound, so that a plan made
// without the value (a generic plan of a prepared statement) still proves
// the index's predicate.
var certificationConds = map[string]string{
	"T": "a.endorsements @> '{T}'::text[]",
	"H": "a.endorsements @> '{H}'::text[]",
	"N": "a.endorsements @> '{N}'::text[]",
	"X": "a.endorsements @> '{X}'::text[]",
}

// maxExperienceHalves caps applications.experience_halves (migration 0005).
const maxExperienceHalves = 1000

// conditions collects SQL conditions to be joined with AND, and their
// arguments, numbered in the order they are added.
type conditions struct {
	conds []string
	args  []any
}

// add appends cond, whose ? placeholders take vals in turn.
func (c *conditions) add(cond string, vals ...any) {
	for _, v := range vals {
		c.args = append(c.args, v)
		cond = strings.Replace(cond, "?", fmt.Sprintf("$%d", len(c.args)), 1)
	}
	c.conds = append(c.conds, cond)
}

// bind appends v to the arguments and returns its placeholder, for a
// statement's text outside its conditions (a join's).
func (c *conditions) bind(v any) string {
	c.args = append(c.args, v)
	return fmt.Sprintf("$%d", len(c.args))
}

// addIfSet adds cond with val when the filter has val ("" is no filter).
func (c *conditions) addIfSet(cond, val string) {
	if val != "" {
		c.add(cond, val)
	}
}

// addIfGiven adds cond with *val when the filter has val (nil is no filter).
func addIfGiven[T any](c *conditions, cond string, val *T) {
	if val != nil {
		c.add(cond, *val)
	}
}

// where builds the filter's conditions on applications a, with args from $1.
func (f DriverFilter) where(accountID int64) (string, []any) {
	c := &conditions{}
	c.add("a.account_id = ?", accountID)
	if f.MatchNothing {
		c.add("false")
	}
	if cond, ok := certificationConds[f.Certification]; ok {
		c.add(cond)
	} else if f.Certification != "" {
		c.add("a.endorsements @> ?::text[]", pq.StringArray{f.Certification})
	}
	c.addIfSet("a.driver_type = ?", f.DriverType)
	c.addIfSet("a.email_key = ?", f.EmailKey)
	c.addIfSet("a.phone_digits = ?", f.PhoneDigits)
	addIfGiven(c, "a.sent >= ?", f.SentFrom)
	addIfGiven(c, "a.sent < ?", f.SentBefore)
	c.addIfSet("a.first_name_key = ?", f.FirstNameKey)
	c.addIfSet("a.last_name_key = ?", f.LastNameKey)
	addIfGiven(c, "a.has_job_apps = ?", f.HasJobApps)
	switch {
	case f.JobTitle != "" && f.titleJoined:
		// One probe of job_applications_title_idx a row read.
		c.add(`EXISTS (SELECT 1 FROM job_applications ja
			WHERE ja.account_id = $1 AND ja.job_title_lower = lower(?) AND ja.driver_id = a.driver_id)`, f.JobTitle)
	case f.JobTitle != "":
		// Uncorrelated, so it runs once: who applied to a job of that
		// title, from one range of job_applications_title_idx.
		c.add(`a.driver_id = ANY (ARRAY(SELECT ja.driver_id FROM job_applications ja
			WHERE ja.account_id = $1 AND ja.job_title_lower = lower(?)))`, f.JobTitle)
	}
	if f.Radius != nil {
		switch {
		case !f.radiusWalked:
			c.addLatitudeBands(*f.Radius)
			c.addBox(*f.Radius)
		case f.Sort != "state":
			c.addBox(*f.Radius)
		default:
			// Walked a state at a time (radiusByStatePage), where the box
			// would draw the planner to the state's part of it and a sort.
		}
		c.addCircle(*f.Radius)
	}
	if f.MinExperience != nil {
		c.addMinExperience(*f.MinExperience)
	}
	c.addIfSet("a.state = ?", f.State)
	c.addStatuses(f.Statuses)
	return strings.Join(c.conds, " AND "), c.args
}

// latitudeBandsPerDegree is how many bands of latitude a degree makes in
// applications_location_page_idx (migration 0025), which is led by
// floor(latitude * latitudeBandsPerDegree).
const latitudeBandsPerDegree = 4

// boundingBox returns the half-sides, in degrees, of a box around r's
// centre that holds its circle.
func (r Radius) boundingBox() (dLat, dLon float64) {
	dLat = r.Miles / 68.0
	dLon = 180.0
	if cos := math.Cos((math.Abs(r.Latitude) + dLat) * math.Pi / 180); cos > 0.01 {
		dLon = math.Min(180, r.Miles/(68.0*cos))
	}
	return dLat, dLon
}

// addLatitudeBands names the bands of latitude of the location index that
// r's box spans, so that the index reads the box's part of each band
// rather than the whole width of the box's latitudes. The band is written
// as the index's expression.
func (c *conditions) addLatitudeBands(r Radius) {
	dLat, _ := r.boundingBox()
	from := math.Floor((r.Latitude - dLat) * latitudeBandsPerDegree)
	to := math.Floor((r.Latitude + dLat) * latitudeBandsPerDegree)
	from, to = math.Max(from, -90*latitudeBandsPerDegree), math.Min(to, 90*latitudeBandsPerDegree)
	var bands pq.Int64Array
	for b := from; b <= to; b++ {
		bands = append(bands, int64(b))
	}
	c.add(fmt.Sprintf("floor(a.latitude * %d)::integer = ANY (?::integer[])", latitudeBandsPerDegree), bands)
}

// addRadius keeps the applicants whose home centroid is within r: a
// bounding box an index can use, then the exact great-circle test.
func (c *conditions) addRadius(r Radius) {
	c.addBox(r)
	c.addCircle(r)
}

// addBox keeps the applicants within the box around r that holds its
// circle.
func (c *conditions) addBox(r Radius) {
	dLat, dLon := r.boundingBox()
	c.add("a.latitude BETWEEN ? AND ?", r.Latitude-dLat, r.Latitude+dLat)
	c.add("a.longitude BETWEEN ? AND ?", r.Longitude-dLon, r.Longitude+dLon)
}

// addCircle keeps the applicants within r, the box's test left to
// addBox.
func (c *conditions) addCircle(r Radius) {
	// The great-circle test compares the haversine
	// h = sin²(Δφ/2) + cos φ1 cos φ2 sin²(Δλ/2) with its value at the
	// radius, sin²(miles/2R), which grows with the distance up to half
	// the globe: the same test as 2R asin(√h) <= miles, without asin and
	// sqrt per row. A box inside the circle passes with no trigonometry
	// at all: within half-sides a (latitude) and b (longitude) of the
	// centre, h <= sin²(a/2) + cos φ1 sin²(b/2) since cos φ2 <= 1, so
	// choosing sin²(a/2) and cos φ1 sin²(b/2) each half the limit keeps
	// the whole box within the radius.
	limit := math.Pow(math.Sin(math.Min(r.Miles/(2*EarthRadiusMiles), math.Pi/2)), 2)
	cosLat := math.Cos(r.Latitude * math.Pi / 180)
	inLat := 2 * math.Asin(math.Sqrt(limit/2)) * 180 / math.Pi
	inLon := 180.0
	if cosLat > 0 && limit/(2*cosLat) < 1 {
		inLon = 2 * math.Asin(math.Sqrt(limit/(2*cosLat))) * 180 / math.Pi
	}
	c.add(`(a.latitude BETWEEN ? AND ? AND a.longitude BETWEEN ? AND ?
		OR power(sin(radians(a.latitude - ?) / 2), 2) +
		   ? * cos(radians(a.latitude)) * power(sin(radians(a.longitude - ?) / 2), 2) <= ?)`,
		r.Latitude-inLat, r.Latitude+inLat, r.Longitude-inLon, r.Longitude+inLon,
		r.Latitude, cosLat, r.Longitude, limit)
}

// addMinExperience keeps the applicants with at least m years of experience.
func (c *conditions) addMinExperience(m float64) {
	// experience_halves is floor(2 * years), never negative, capped at
	// maxExperienceHalves: for a whole number k of half-years up to the
	// cap, floor(2y) >= k exactly when y >= k/2, so the indexed integer
	// alone decides. Other minimums narrow by it, then compare the years.
	switch halves := math.Max(2*m, -1); {
	case halves > maxExperienceHalves || math.IsNaN(halves):
		c.add("a.experience_years >= ?", m)
	case halves == math.Trunc(halves):
		c.add("a.experience_halves >= ?", int(halves))
	default:
		c.add("a.experience_halves >= ? AND a.experience_years >= ?", int(math.Floor(halves)), m)
	}
}

// addStatuses keeps the applicants of any of the statuses, from
// applications_status_idx (migration 0032): one status is one range of
// it, in driver id order.
func (c *conditions) addStatuses(statuses []string) {
	switch len(statuses) {
	case 0:
	case 1:
		c.add("a.status = ?", statuses[0])
	default:
		c.add("a.status = ANY (?::text[])", pq.StringArray(statuses))
	}
}

// Query is one SQL statement with its arguments.
type Query struct {
	SQL  string
	Args []any
	// Serial runs the statement without parallel workers (SerialSetting),
	// in a read-only transaction of its own: one more round trip each
	// way, so only where a parallel plan has been seen to cost more than
	// it saves.
	Serial bool
	// Setting is a SET LOCAL the statement ran under, in a read-only
	// transaction; "" for none.
	Setting string
	// Rows is the most rows the statement returns (its LIMIT), 0 when
	// unbounded: the result is made that large up front.
	Rows int
}

// SerialSetting, run with SET LOCAL, keeps the planner from parallel plans.
const SerialSetting = `SET LOCAL max_parallel_workers_per_gather = 0`

// DriverListQueries returns the two statements ListDrivers runs for the
// filter: the page of drivers and the count of all matches. ListDrivers
// runs exactly these, so they can be explained or timed on their own. The
// form of a job title listed in another order depends on the account's
// counts (titleJoins), read from the database ListDrivers reads.
func (s *Store) DriverListQueries(ctx context.Context, accountID int64, f DriverFilter) (page, count Query, err error) {
	err = s.read(ctx, func(db *sqlx.DB) error {
		page, count, err = driverListQueries(ctx, db, accountID, f)
		return err
	})
	return page, count, err
}

// driverListQueries is DriverListQueries on db.
func driverListQueries(ctx context.Context, db *sqlx.DB, accountID int64, f DriverFilter) (page, count Query, err error) {
	if f.titleJoined, err = titleJoins(ctx, db, accountID, f); err != nil {
		return page, count, err
	}
	if f.radiusWalked, err = radiusWalks(ctx, db, accountID, f); err != nil {
		return page, count, err
	}
	page, count = driverListStatements(accountID, f)
	return page, count, nil
}

// driverListStatements builds the statements of DriverListQueries.
func driverListStatements(accountID int64, f DriverFilter) (page, count Query) {
	// The count reads the radius's box whatever the page's order: it
	// visits every match.
	counted := f
	counted.radiusWalked = false
	where, args := counted.where(accountID)
	count = countQuery(accountID, counted, where, args)
	where, args = f.where(accountID)
	// Page on applications alone, then read the profiles of the page's 100
	// or so rows: reading them before the limit would fetch every matching
	// row. The page reads only the columns it shows or orders by, so an
	// index that holds them all (the radius one) answers it without the
	// table.
	order := orderBy(f)
	cols := []string{"a.driver_id", "a.sent", "a.has_job_apps"}
	for _, c := range sortColumns[f.Sort] {
		if !slices.Contains(cols, c) {
			cols = append(cols, c)
		}
	}
	after, args := f.keyset(args)
	pageArgs := append(append([]any{}, args...), f.Limit, f.Offset)
	if jobTitleAlone(accountID, f) && (f.Sort == "" || f.Sort == "id") && f.After == nil {
		// In id order the page is the title's first applicants, in the
		// index's own order: only the page's rows are read, whatever the
		// number of matches.
		page = Query{SQL: `
		SELECT ` + listColumns("a.") + `, a.sent, a.has_job_apps, ` + sortKeyColumns(f) + `
		  FROM (SELECT DISTINCT ja.driver_id
		          FROM job_applications ja
		         WHERE ja.account_id = $1 AND ja.job_title_lower = lower($2)
		         ORDER BY ` + strings.ReplaceAll(order, "a.", "ja.") + `
		         LIMIT $3 OFFSET $4) ja
		  JOIN applications a ON a.account_id = $1 AND a.driver_id = ja.driver_id
		 ORDER BY ` + order, Args: []any{accountID, f.JobTitle, f.Limit, f.Offset}, Rows: f.Limit}
		return page, count
	}
	inner := `SELECT ` + strings.Join(cols, ", ") + `
		          FROM applications a
		         WHERE ` + where + after + `
		         ORDER BY ` + order + fmt.Sprintf(`
		         LIMIT $%d OFFSET $%d`, len(pageArgs)-1, len(pageArgs))
	if f.radiusWalked && f.Sort == "state" {
		inner, pageArgs = radiusByStatePage(f, where, after, cols, args)
	}
	page = Query{SQL: `
		SELECT ` + listColumns("p.") + `, a.sent, a.has_job_apps, ` + sortKeyColumns(f) + `
		  FROM (` + inner + `) a
		  JOIN applications p ON p.account_id = $1 AND p.driver_id = a.driver_id
		 ORDER BY ` + order, Args: pageArgs,
		// The radius test's box and circle make the planner underestimate
		// the matches a hundredfold; at 1,000,000 applications it then
		// plans a parallel walk of the order's index, and starting the
		// workers took 260-800 ms on two cores for 1,900 rows read.
		Serial: f.Radius != nil, Rows: f.Limit}
	return page, count
}

// radiusByStatePage is the page of a radius in state order, read a state
// at a time, each state's part in id order: the states from the account's
// counts (intake takes US state codes only, so a few dozen), in order,
// and for each the first offset+limit applicants of its part (the
// lateral's LIMIT). The states come sorted, so the executor
// stops at the state that completes the page (an incremental sort): the
// states after it are never read. A state whose part holds at least
// statePartWalkFactor*(offset+limit) matches is walked in id order on
// applications_state_idx, which carries the places (migration 0046): the
// page's rows come after about (offset+limit)*n/m entries for m matches
// of its n applicants, n/statePartWalkFactor at most. A smaller part is
// read from applications_state_location_idx, the state's part of the
// box, and sorted. The probe that tells them apart counts the part up to
// that bound, on the same index. where is the filter's conditions without
// the box (f.radiusWalked), after its keyset condition, args the
// arguments of both; it returns the page's subquery and its arguments.
//
// At 1,000,000 applications (demo seed), 50 miles around 07030 with
// driver_type=Company Driver (26,177 matches), ListDrivers took 21.4 ms
// at the median reading the box; a state at a time, 6.6 ms. 250 miles
// around it (210,201 matches): the planner walked applications_state_idx
// across every state, 394 ms; now 5.5 ms.
func radiusByStatePage(f DriverFilter, where, after string, cols []string, args []any) (string, []any) {
	c := &conditions{args: args}
	c.addLatitudeBands(*f.Radius)
	c.addBox(*f.Radius)
	part := strings.Join(c.conds, " AND ")
	need := f.Offset + f.Limit
	probe, upTo := c.bind(statePartWalkFactor*need), c.bind(need)
	// The states start at the cursor's, when the page has one.
	from := ""
	if f.After != nil && len(f.After.Keys) == 1 {
		op := ">="
		if f.Descending {
			op = "<="
		}
		from = ` AND value COLLATE "default" ` + op + ` ` + c.bind(f.After.Keys[0]) + `::text`
	}
	limit, offset := c.bind(f.Limit), c.bind(f.Offset)
	dir := f.direction()
	sel := strings.Join(cols, ", ")
	// The counts' values compare bytes (COLLATE "C"); the column's
	// collation lets the indexes on applications.state take them.
	return `SELECT a.*
		  FROM (SELECT value COLLATE "default" AS state FROM application_counts
		         WHERE account_id = $1 AND dimension = 'state'` + from + `
		         GROUP BY value HAVING sum(n) > 0
		         ORDER BY 1` + dir + `) s
		 CROSS JOIN LATERAL (SELECT count(*) AS n FROM (SELECT FROM applications a
		         WHERE ` + where + ` AND a.state = s.state AND ` + part + `
		         LIMIT ` + probe + `) m) k
		 CROSS JOIN LATERAL (
		       (SELECT ` + sel + ` FROM applications a
		         WHERE k.n >= ` + probe + ` AND ` + where + ` AND a.state = s.state` + after + `
		         ORDER BY a.driver_id LIMIT ` + upTo + `)
		       UNION ALL
		       (SELECT ` + sel + ` FROM applications a
		         WHERE k.n > 0 AND k.n < ` + probe + ` AND ` + where + ` AND a.state = s.state AND ` + part + after + `
		         ORDER BY a.driver_id LIMIT ` + upTo + `)) a
		 ORDER BY s.state` + dir + `, a.driver_id
		 LIMIT ` + limit + ` OFFSET ` + offset, c.args
}

// statePartWalkFactor is how many times offset+limit a state's part of a
// radius must hold for radiusByStatePage to walk the state rather than
// read its part and sort it.
const statePartWalkFactor = 10

// keyset returns the condition (with a leading AND) that starts the page
// after f.After, and args with its values appended; nothing without
// After. Ties go by id ascending whatever the direction, as in orderBy.
func (f DriverFilter) keyset(args []any) (string, []any) {
	if f.After == nil {
		return "", args
	}
	args = append([]any{}, args...) // the count's arguments stay as they are
	op := ">"
	if f.Descending {
		op = "<"
	}
	args = append(args, f.After.ID)
	id := fmt.Sprintf("$%d", len(args))
	cols := sortColumns[f.Sort]
	if len(cols) == 0 || len(f.After.Keys) != len(cols) {
		// Sorting by id (or a cursor of another sort, which the caller's
		// signed scope rules out): the id alone places the row.
		return " AND a.driver_id " + op + " " + id, args
	}
	var vals []string
	for i, c := range cols {
		args = append(args, f.After.Keys[i])
		v := fmt.Sprintf("$%d", len(args))
		if t, ok := sortColumnTypes[c]; ok {
			v += "::" + t
		} else {
			v += "::text"
		}
		vals = append(vals, v)
	}
	// The first condition is a range an index on the sort columns can
	// start at; the second leaves out the rows of the tie already answered.
	row, at := "("+strings.Join(cols, ", ")+")", "("+strings.Join(vals, ", ")+")"
	return fmt.Sprintf(" AND %s %s= %s AND (%s <> %s OR a.driver_id > %s)", row, op, at, row, at, id), args
}

// sortKeyColumns selects a page row's values of the sort columns as text,
// sort_key_1 and sort_key_2, NULL where the sort has fewer columns.
func sortKeyColumns(f DriverFilter) string {
	keys := []string{"NULL::text", "NULL::text"}
	for i, c := range sortColumns[f.Sort] {
		keys[i] = c + "::text"
	}
	return keys[0] + " AS sort_key_1, " + keys[1] + " AS sort_key_2"
}

// listColumns are the account's profile columns of the list, read from
// the applications row with the given alias prefix.
func listColumns(prefix string) string {
	cols := []string{prefix + "driver_id AS id"}
	for _, c := range []string{"first_name", "last_name", "address", "address2", "city", "state", "zip",
		"email", "phone", "driver_type", "experience", "status"} {
		cols = append(cols, prefix+c)
	}
	return strings.Join(cols, ", ")
}

// jobTitleAlone reports whether the job title is the filter's only condition.
func jobTitleAlone(accountID int64, f DriverFilter) bool {
	if f.JobTitle == "" {
		return false
	}
	f.JobTitle = ""
	where, _ := f.where(accountID)
	return where == "a.account_id = $1"
}

// ListDrivers returns one page of the account's applicants and the number
// matching on all pages.
func (s *Store) ListDrivers(ctx context.Context, accountID int64, f DriverFilter) ([]DriverListItem, int64, error) {
	var total int64
	var items []DriverListItem
	err := s.read(ctx, func(db *sqlx.DB) error {
		page, count, err := driverListQueries(ctx, db, accountID, f)
		if err != nil {
			return err
		}
		items, total, err = listDrivers(ctx, db, page, count)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return items, total, nil
}

// titleJoins reports whether the filter's job title is written as the
// semi-join rather than the array of the title's applicants. With other
// filters it always is: the array hides its size from the planner, which
// then probes the index of another filter once per applicant of the title.
// At 1,000,000 applications, state=TX with a title of 100,073 applicants
// took 270 ms to count that way, 130-145 ms a page in any order; the
// semi-join merged the two ranges in driver id order, 19-26 ms to count,
// under 5 ms a page. A title of 47 applicants was probed once each either
// way, under a millisecond, and one of 8,957 was faster joined. A title alone is
// counted from application_counts; its page is walksTitleInOrder's choice.
func titleJoins(ctx context.Context, db *sqlx.DB, accountID int64, f DriverFilter) (bool, error) {
	if f.JobTitle == "" {
		return false, nil
	}
	if !jobTitleAlone(accountID, f) {
		return true, nil
	}
	return walksTitleInOrder(ctx, db, accountID, f)
}

// accountApplicantsSQL is the number of applicants of account $1, from
// application_counts: the n of walksTitleInOrder's and radiusWalks' estimates.
const accountApplicantsSQL = `(SELECT coalesce(sum(n), 0) FROM application_counts
		         WHERE account_id = $1 AND dimension = 'all' AND value = '')`

// walkCostRatio is what a row read by walking the order costs, counted in
// the title's applicants read and sorted by the array form. At 1,000,000
// applications with a title of 66,985, ListDrivers warm (median of 12):
// the array form 180-190 ms a page, about 2.8 us an applicant; a walk by
// name read 1,513 rows for a page of 100 in 7.7-9 ms, about 5-6 us a row.
// 3 rather than 2 leans toward the array, whose cost is bounded by the
// title's applicants, while a walk reads more where they sit late in the
// order.
const walkCostRatio = 3

// walksTitleInOrder reports whether the page of a job title alone, in an
// order other than the title's own, is found sooner by walking the order's
// index and keeping the title's applicants (about (offset+limit)*n/m rows
// for m applicants of n) than by reading all m and sorting them. The
// planner cannot tell: it takes the array of applicants for a handful and
// the title's statistics are the whole table's, not the account's. The
// counts of migration 0018 are exact and one index read away.
func walksTitleInOrder(ctx context.Context, db *sqlx.DB, accountID int64, f DriverFilter) (bool, error) {
	idOrder := f.Sort == "" || f.Sort == "id"
	if !jobTitleAlone(accountID, f) || idOrder && f.After == nil {
		return false, nil // no title, or the title's own order (driverListStatements)
	}
	var m, n int64
	err := db.QueryRowContext(ctx, `
		SELECT (SELECT coalesce(sum(n), 0) FROM application_counts
		         WHERE account_id = $1 AND dimension = 'job_title' AND value = lower($2)),
		       `+accountApplicantsSQL,
		accountID, f.JobTitle).Scan(&m, &n)
	if err != nil {
		return false, fmt.Errorf("count the job title's applicants: %w", err)
	}
	rows := int64(f.Offset + f.Limit)
	return m > 0 && m*m >= walkCostRatio*rows*n, nil
}

// radiusWalkCostRatio is what a row read by walking the id order costs,
// counted in entries of the radius's box read from the location index and
// sorted. Both reads are of an index alone: applications_list_idx carries
// the applicants' places (migration 0042). At 100,000 applications, 50
// miles around 07030 (5,178 of them), the page of 100 alone, warm: the
// walk read about 1,930 entries in 0.22-0.37 ms, the box's 5,178 entries
// and their sort took 1.2-1.6 ms, so a row walked costs less than an entry
// of the box. 2 leaves room for rows not in memory and for a driver type
// or job applications the walk reads past.
const radiusWalkCostRatio = 2

// walkedOrders are the sorts whose index carries the applicants' places
// (migrations 0042, 0045 and 0046), for radiusWalks; "" is the id order.
var walkedOrders = map[string]bool{"": true, "id": true, "name": true, "sent": true, "driver_type": true,
	"state": true}

// radiusWalks reports whether the page of a radius is found sooner by
// walking the order's index and testing each applicant's place (about
// (offset+limit)*n/m rows for m matches among n applicants) than by
// reading every entry of the radius's box and sorting them. The planner
// cannot tell: it takes the box's conditions for independent and a wide
// radius for a few hundred rows. m is exact and a few index pages away
// where the location counts hold the filter: a radius alone or with a
// driver type or job applications. With any other filter the box is
// read: the walk would follow that filter's index and test the place of
// each of its rows, as many as the filter matches whatever the radius
// (state=TX within 50 miles of 07030, at 100,000 applications: 5,313 rows
// read for none found, 3.7-42 ms, where the box took 0.65-1.1 ms).
//
// The estimate holds for an order the radius's matches are spread along,
// not for the state order: neighbours share their states, and a walk by
// state would read every applicant of the states before theirs first.
// That order is walked a state at a time instead (radiusByStatePage),
// which costs a probe of each state up to the page's: worth it where the
// radius holds statePartWalkFactor pages or more.
func radiusWalks(ctx context.Context, db *sqlx.DB, accountID int64, f DriverFilter) (bool, error) {
	if !walkedOrders[f.Sort] || !radiusCounted(accountID, f) {
		return false, nil
	}
	within, args := radiusCountSQL(accountID, *f.Radius, f.DriverType, f.HasJobApps)
	var m, n int64
	err := db.QueryRowContext(ctx, `
		SELECT `+within+`, `+accountApplicantsSQL, args...).Scan(&m, &n)
	if err != nil {
		return false, fmt.Errorf("count the radius's applicants: %w", err)
	}
	rows := int64(f.Offset + f.Limit)
	if f.Sort == "state" {
		return m > 0 && m >= statePartWalkFactor*rows, nil
	}
	return m > 0 && m*m >= radiusWalkCostRatio*rows*n, nil
}

// listDrivers runs the page and count queries of a drivers list on db.
func listDrivers(ctx context.Context, db *sqlx.DB, page, count Query) ([]DriverListItem, int64, error) {
	// The count and the page are independent reads, never one snapshot, so
	// they run at the same time on two connections: the list takes as long
	// as the slower of the two, not both.
	g, gctx := errgroup.WithContext(ctx)
	var total int64
	g.Go(func() error {
		err := inPlanSettings(gctx, db, count, func(q sqlx.QueryerContext) error {
			return sqlx.GetContext(gctx, q, &total, count.SQL, count.Args...)
		})
		if err != nil {
			return fmt.Errorf("count drivers: %w", err)
		}
		return nil
	})
	// Made for the whole page at once: grown row by row, the slice of
	// these wide rows was a third of the bytes a drivers request allocated
	// (bench scenario 4's allocation profile), and the collector ran about
	// once every 18 requests.
	items := make([]DriverListItem, 0, min(page.Rows, maxPreallocatedRows))
	g.Go(func() error {
		err := inPlanSettings(gctx, db, page, func(q sqlx.QueryerContext) error {
			return sqlx.SelectContext(gctx, q, &items, page.SQL, page.Args...)
		})
		if err != nil {
			return fmt.Errorf("list drivers: %w", err)
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, 0, err
	}
	return items, total, nil
}

// maxPreallocatedRows bounds the room made for a page before its rows are
// read: a page of the largest size that matches a handful of drivers
// should not cost the memory of a full one.
const maxPreallocatedRows = 250

// inPlanSettings runs read on db, or, for a Query.Serial, in a read-only
// transaction without parallel workers.
func inPlanSettings(ctx context.Context, db *sqlx.DB, q Query, read func(sqlx.QueryerContext) error) error {
	if !q.Serial {
		return read(db)
	}
	tx, err := db.BeginTxx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a read: nothing to keep or lose
	if _, err := tx.ExecContext(ctx, SerialSetting); err != nil {
		return err
	}
	if err := read(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// direction is the SQL direction of the filter's sort: "" or " DESC".
func (f DriverFilter) direction() string {
	if f.Descending {
		return " DESC"
	}
	return ""
}

// orderBy returns the ORDER BY of the filter's sort. Ties always go by id
// ascending; sorting by id itself follows the direction. The subquery keeps
// the column names, so the same clause orders the page inside and out.
func orderBy(f DriverFilter) string {
	dir := f.direction()
	var order []string
	for _, c := range sortColumns[f.Sort] {
		order = append(order, c+dir)
	}
	if f.Sort == "id" || f.Sort == "" {
		order = append(order, "a.driver_id"+dir)
	} else {
		order = append(order, "a.driver_id")
	}
	return strings.Join(order, ", ")
}

// DriverDetail is one applicant with the whole profile.
type DriverDetail struct {
	ID         int64     `db:"id"`
	Sent       time.Time `db:"sent"`
	HasJobApps bool      `db:"has_job_apps"`
	// Status is the account's lead status of the driver.
	Status string `db:"status"`
	DriverProfile
	Employment []Employment
	JobApps    []JobApplication
}

// JobApplication is a stored application to one of the account's jobs.
type JobApplication struct {
	JobID       int64     `db:"job_id"`
	Title       string    `db:"title"`
	Reference   string    `db:"reference_number"`
	IsDirectApp bool      `db:"is_direct_app"`
	CreatedAt   time.Time `db:"created_at"`
}

// driverDetailColumns are the profile columns of applications a, the date
// as text.
var driverDetailColumns = strings.Replace(profileColumns("a."), "a.date_of_birth",
	"to_char(a.date_of_birth, 'YYYY-MM-DD') AS date_of_birth", 1)

// Driver returns an applicant of the account, or ErrNotFound for a driver
// who did not apply to it.
func (s *Store) Driver(ctx context.Context, accountID, id int64) (DriverDetail, error) {
	var d DriverDetail
	err := s.read(ctx, func(db *sqlx.DB) error {
		var err error
		d, err = driverDetail(ctx, db, accountID, id)
		return err
	})
	if errors.Is(err, ErrNotFound) && s.reads != nil && !s.primaryIsDown() {
		// A driver just imported may not have reached the standby yet;
		// the primary has the last word on one that does not exist.
		d, err = driverDetail(ctx, s.db, accountID, id)
		if IsUnavailable(err) && ctx.Err() == nil {
			// While it cannot be reached, the standby's answer stands: it
			// is what a failover to it would keep.
			s.primaryFailed(err)
			return DriverDetail{}, ErrNotFound
		}
	}
	return d, err
}

func driverDetail(ctx context.Context, db *sqlx.DB, accountID, id int64) (DriverDetail, error) {
	details, err := driverDetails(ctx, db, accountID, []int64{id})
	if err != nil {
		return DriverDetail{}, err
	}
	d, ok := details[id]
	if !ok {
		return DriverDetail{}, ErrNotFound
	}
	return d, nil
}

// DriverDetails reads, in the transaction that saved them, the account's
// applicants with the given ids as GET drivers.json/{id} shows them; an id
// that did not apply to the account is missing from the map. Three
// statements, whatever the number.
func (t *Tx) DriverDetails(ctx context.Context, accountID int64, ids []int64) (map[int64]DriverDetail, error) {
	return driverDetails(ctx, t.tx, accountID, ids)
}

// driverDetails reads several applicants of an account, each with its
// employment history and job applications, in one statement for each.
func driverDetails(ctx context.Context, q sqlx.QueryerContext, accountID int64, ids []int64) (map[int64]DriverDetail, error) {
	var found []DriverDetail
	if err := sqlx.SelectContext(ctx, q, &found, `SELECT a.driver_id AS id, a.sent, a.has_job_apps, a.status, `+driverDetailColumns+`
		  FROM applications a
		 WHERE a.account_id = $1 AND a.driver_id = ANY($2)`, accountID, pq.Array(ids)); err != nil {
		return nil, fmt.Errorf("get drivers: %w", err)
	}
	out := make(map[int64]DriverDetail, len(found))
	for _, d := range found {
		d.Employment, d.JobApps = []Employment{}, []JobApplication{}
		out[d.ID] = d
	}
	var employment []struct {
		DriverID int64 `db:"driver_id"`
		Employment
	}
	if err := sqlx.SelectContext(ctx, q, &employment, `SELECT driver_id, company, state, phone,
		to_char(start_date, 'YYYY-MM-DD') AS start_date, to_char(end_date, 'YYYY-MM-DD') AS end_date
		FROM employment_history WHERE account_id = $1 AND driver_id = ANY($2) ORDER BY driver_id, position`,
		accountID, pq.Array(ids)); err != nil {
		return nil, fmt.Errorf("get employment history: %w", err)
	}
	for _, e := range employment {
		if d, ok := out[e.DriverID]; ok {
			d.Employment = append(d.Employment, e.Employment)
			out[e.DriverID] = d
		}
	}
	var jobApps []struct {
		DriverID int64 `db:"driver_id"`
		JobApplication
	}
	if err := sqlx.SelectContext(ctx, q, &jobApps, `SELECT ja.driver_id, ja.job_id, j.title, j.reference_number, ja.is_direct_app, ja.created_at
		FROM job_applications ja JOIN jobs j ON j.id = ja.job_id
		WHERE ja.account_id = $1 AND ja.driver_id = ANY($2) ORDER BY ja.driver_id, ja.created_at, ja.job_id`,
		accountID, pq.Array(ids)); err != nil {
		return nil, fmt.Errorf("get job applications: %w", err)
	}
	for _, j := range jobApps {
		if d, ok := out[j.DriverID]; ok {
			d.JobApps = append(d.JobApps, j.JobApplication)
			out[j.DriverID] = d
		}
	}
	return out, nil
}
