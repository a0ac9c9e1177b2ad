package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/lib/pq"
)

// DriverFilter selects and orders an account's applicants. Values are
// already validated and in the form the columns hold (lower case, digits).
type DriverFilter struct {
	Certification string // T, H, N or X
	DriverType    string
	EmailLower    string
	PhoneDigits   string
	// MatchNothing is set for a filter value that can match no driver, such
	// as an invalid e-mail address: the list is empty, not an error.
	MatchNothing   bool
	SentFrom       *time.Time // inclusive
	SentBefore     *time.Time // exclusive
	FirstNameLower string
	LastNameLower  string
	HasJobApps     *bool
	JobTitle       string
	Radius         *Radius
	MinExperience  *float64
	State          string
	Sort           string // id, name, state, driver_type or sent
	Descending     bool
	Limit, Offset  int
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
}

var sortColumns = map[string][]string{
	"id":          nil,
	"name":        {"a.last_name_lower", "a.first_name_lower"},
	"state":       {"a.state"},
	"driver_type": {"a.driver_type"},
	"sent":        {"a.sent"},
}

// where builds the filter's conditions on applications a, with args from $1.
func (f DriverFilter) where(accountID int64) (string, []any) {
	conds := []string{"a.account_id = $1"}
	args := []any{accountID}
	add := func(cond string, vals ...any) {
		for _, v := range vals {
			args = append(args, v)
			cond = strings.Replace(cond, "?", fmt.Sprintf("$%d", len(args)), 1)
		}
		conds = append(conds, cond)
	}
	if f.MatchNothing {
		conds = append(conds, "false")
	}
	if f.Certification != "" {
		add("a.endorsements @> ?::text[]", pq.StringArray{f.Certification})
	}
	if f.DriverType != "" {
		add("a.driver_type = ?", f.DriverType)
	}
	if f.EmailLower != "" {
		add("a.email_lower = ?", f.EmailLower)
	}
	if f.PhoneDigits != "" {
		add("a.phone_digits = ?", f.PhoneDigits)
	}
	if f.SentFrom != nil {
		add("a.sent >= ?", *f.SentFrom)
	}
	if f.SentBefore != nil {
		add("a.sent < ?", *f.SentBefore)
	}
	if f.FirstNameLower != "" {
		add("a.first_name_lower = ?", f.FirstNameLower)
	}
	if f.LastNameLower != "" {
		add("a.last_name_lower = ?", f.LastNameLower)
	}
	if f.HasJobApps != nil {
		add("a.has_job_apps = ?", *f.HasJobApps)
	}
	if f.JobTitle != "" {
		// Uncorrelated, so it runs once: the account's jobs with that title,
		// then who applied to them.
		add(`a.driver_id IN (SELECT ja.driver_id FROM jobs j JOIN job_applications ja ON ja.job_id = j.id
			WHERE j.account_id = $1 AND lower(j.title) = lower(?) AND ja.account_id = $1)`, f.JobTitle)
	}
	if r := f.Radius; r != nil {
		// A bounding box an index can use, then the exact great-circle test.
		dLat := r.Miles / 68.0
		dLon := 180.0
		if c := math.Cos((math.Abs(r.Latitude) + dLat) * math.Pi / 180); c > 0.01 {
			dLon = math.Min(180, r.Miles/(68.0*c))
		}
		add("a.latitude BETWEEN ? AND ?", r.Latitude-dLat, r.Latitude+dLat)
		add("a.longitude BETWEEN ? AND ?", r.Longitude-dLon, r.Longitude+dLon)
		add(fmt.Sprintf(`2 * %v * asin(sqrt(power(sin(radians(a.latitude - ?) / 2), 2) +
			cos(radians(?)) * cos(radians(a.latitude)) * power(sin(radians(a.longitude - ?) / 2), 2))) <= ?`, EarthRadiusMiles),
			r.Latitude, r.Latitude, r.Longitude, r.Miles)
	}
	if f.MinExperience != nil {
		add("a.experience_years >= ?", *f.MinExperience)
	}
	if f.State != "" {
		add("a.state = ?", f.State)
	}
	return strings.Join(conds, " AND "), args
}

// ListDrivers returns one page of the account's applicants and the number
// matching on all pages.
func (s *Store) ListDrivers(ctx context.Context, accountID int64, f DriverFilter) ([]DriverListItem, int64, error) {
	where, args := f.where(accountID)
	var total int64
	if err := s.db.GetContext(ctx, &total, `SELECT count(*) FROM applications a WHERE `+where, args...); err != nil {
		return nil, 0, fmt.Errorf("count drivers: %w", err)
	}
	// Page on applications alone, then read the page's 100 or so drivers:
	// joining drivers before the limit would fetch every matching row.
	order := orderBy(f)
	args = append(args, f.Limit, f.Offset)
	items := []DriverListItem{}
	err := s.db.SelectContext(ctx, &items, `
		SELECT d.id, d.first_name, d.last_name, d.address, d.address2, d.city, d.state, d.zip, d.email,
		       d.phone, d.driver_type, d.experience, a.sent, a.has_job_apps
		  FROM (SELECT a.driver_id, a.sent, a.has_job_apps, a.state, a.driver_type, a.last_name_lower, a.first_name_lower
		          FROM applications a
		         WHERE `+where+`
		         ORDER BY `+order+fmt.Sprintf(`
		         LIMIT $%d OFFSET $%d`, len(args)-1, len(args))+`) a
		  JOIN drivers d ON d.id = a.driver_id
		 ORDER BY `+order, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list drivers: %w", err)
	}
	return items, total, nil
}

// orderBy returns the ORDER BY of the filter's sort. Ties always go by id
// ascending; sorting by id itself follows the direction. The subquery keeps
// the column names, so the same clause orders the page inside and out.
func orderBy(f DriverFilter) string {
	dir := ""
	if f.Descending {
		dir = " DESC"
	}
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

// driverDetailColumns are the profile columns of drivers d, the date as text.
var driverDetailColumns = func() string {
	cols := strings.Split(profileColumns, ",")
	for i, c := range cols {
		c = strings.TrimSpace(c)
		if c == "date_of_birth" {
			cols[i] = "to_char(d.date_of_birth, 'YYYY-MM-DD') AS date_of_birth"
		} else {
			cols[i] = "d." + c
		}
	}
	return strings.Join(cols, ", ")
}()

// Driver returns an applicant of the account, or ErrNotFound for a driver
// who did not apply to it.
func (s *Store) Driver(ctx context.Context, accountID, id int64) (DriverDetail, error) {
	var d DriverDetail
	err := s.db.GetContext(ctx, &d, `SELECT d.id, a.sent, a.has_job_apps, `+driverDetailColumns+`
		  FROM applications a JOIN drivers d ON d.id = a.driver_id
		 WHERE a.account_id = $1 AND a.driver_id = $2`, accountID, id)
	if errors.Is(err, sql.ErrNoRows) {
		return DriverDetail{}, ErrNotFound
	}
	if err != nil {
		return DriverDetail{}, fmt.Errorf("get driver %d: %w", id, err)
	}
	d.Employment = []Employment{}
	if err := s.db.SelectContext(ctx, &d.Employment, `SELECT company, state, phone,
		to_char(start_date, 'YYYY-MM-DD') AS start_date, to_char(end_date, 'YYYY-MM-DD') AS end_date
		FROM employment_history WHERE driver_id = $1 ORDER BY position`, id); err != nil {
		return DriverDetail{}, fmt.Errorf("get employment history: %w", err)
	}
	d.JobApps = []JobApplication{}
	if err := s.db.SelectContext(ctx, &d.JobApps, `SELECT ja.job_id, j.title, j.reference_number, ja.is_direct_app, ja.created_at
		FROM job_applications ja JOIN jobs j ON j.id = ja.job_id
		WHERE ja.account_id = $1 AND ja.driver_id = $2 ORDER BY ja.created_at, ja.job_id`, accountID, id); err != nil {
		return DriverDetail{}, fmt.Errorf("get job applications: %w", err)
	}
	return d, nil
}
