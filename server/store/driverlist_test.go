package store_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/cmd/jobboard/demo"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestListDriversRadiusExact checks the radius filter, with its boxes and
// its test on the haversine instead of the distance, against the
// great-circle distance computed here, for an applicant at every ZIP
// centroid, around centres from the tropics to Alaska.
func TestListDriversRadiusExact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Store(t)
	acct := storetest.NewAccount(t, s, "radius").AccountID
	if _, err := s.DB().ExecContext(ctx, `
		INSERT INTO drivers (email_key) SELECT 'z' || zip || '@example.com' FROM zip_centroids`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().ExecContext(ctx, `
		INSERT INTO applications (account_id, driver_id, sent, email, first_name, last_name, address, city, zip,
		                          phone, experience, state, driver_type, email_key, phone_digits,
		                          first_name_key, last_name_key, experience_years, endorsements, latitude, longitude)
		SELECT $1, d.id, now(), d.email_key, 'Z', 'Z', '1 Main St', 'Town', z.zip, '2125550100', '1',
		       'TX', 'Student', d.email_key, '2125550100', 'z', 'z', 1, '{}', z.latitude, z.longitude
		  FROM drivers d JOIN zip_centroids z ON d.email_key = 'z' || z.zip || '@example.com'`, acct); err != nil {
		t.Fatal(err)
	}
	var zips []struct {
		Zip       string  `db:"zip"`
		Latitude  float64 `db:"latitude"`
		Longitude float64 `db:"longitude"`
	}
	if err := s.DB().SelectContext(ctx, &zips, `SELECT zip, latitude, longitude FROM zip_centroids`); err != nil {
		t.Fatal(err)
	}
	rad := math.Pi / 180
	distance := func(lat1, lon1, lat2, lon2 float64) float64 {
		h := math.Pow(math.Sin((lat2-lat1)*rad/2), 2) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Pow(math.Sin((lon2-lon1)*rad/2), 2)
		return 2 * store.EarthRadiusMiles * math.Asin(math.Sqrt(h))
	}
	for _, centre := range []string{"10001", "33101", "96813", "99501", "59101", "78040"} {
		lat, lon, err := s.ZipCentroid(ctx, centre)
		if err != nil {
			t.Fatal(err)
		}
		for _, miles := range []float64{1, 10, 50, 150, 500} {
			want := map[string]bool{}
			for _, z := range zips {
				d := distance(lat, lon, z.Latitude, z.Longitude)
				if math.Abs(d-miles) < 1e-6 {
					t.Fatalf("%s is %v miles from %s: too close to call", z.Zip, d, centre)
				}
				if d <= miles {
					want[z.Zip] = true
				}
			}
			items, total, err := s.ListDrivers(ctx, acct, store.DriverFilter{
				Sort: "id", Limit: len(zips), Radius: &store.Radius{Latitude: lat, Longitude: lon, Miles: miles}})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, d := range items {
				got[d.Zip] = true
			}
			for zip := range want {
				if !got[zip] {
					t.Errorf("%v miles of %s: %s is missing", miles, centre, zip)
				}
			}
			for zip := range got {
				if !want[zip] {
					t.Errorf("%v miles of %s: %s is too far", miles, centre, zip)
				}
			}
			if total != int64(len(want)) || len(want) == 0 {
				t.Errorf("%v miles of %s: total %d, want %d (and some)", miles, centre, total, len(want))
			}
		}
	}
}

// TestZipCentroidKeptOnceFound: a ZIP found is answered from memory after
// (the table never changes once loaded), and one not found is asked again.
func TestZipCentroidKeptOnceFound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Store(t)
	lat, lon, err := s.ZipCentroid(ctx, "07030")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().ExecContext(ctx, `DELETE FROM zip_centroids WHERE zip IN ('07030', '07310')`); err != nil {
		t.Fatal(err)
	}
	if lat2, lon2, err := s.ZipCentroid(ctx, "07030"); err != nil || lat2 != lat || lon2 != lon {
		t.Errorf("07030 again: %v, %v, %v; want %v, %v from memory", lat2, lon2, err, lat, lon)
	}
	if _, _, err := s.ZipCentroid(ctx, "07310"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("07310 after its row went: %v, want ErrNotFound", err)
	}
	if _, err := s.DB().ExecContext(ctx, `INSERT INTO zip_centroids (zip, latitude, longitude) VALUES ('07310', 40.73, -74.03)`); err != nil {
		t.Fatal(err)
	}
	if lat, lon, err := s.ZipCentroid(ctx, "07310"); err != nil || lat != 40.73 || lon != -74.03 {
		t.Errorf("07310 once stored: %v, %v, %v; want it asked again and found", lat, lon, err)
	}
}

// TestJobTitlePageInOtherOrders: a job title alone, listed in an order
// other than its own (by name, date, state, or by id after a cursor), is
// written as a semi-join when the title holds enough of the account that
// walking the order finds a page soon, and as the array of its applicants
// otherwise; both forms give the same page.
func TestJobTitlePageInOtherOrders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, a := titledApplicants(t)
	for _, title := range []struct {
		name  string
		walks bool
	}{{"Common Route", true}, {"rare route", false}} {
		first, _, err := s.ListDrivers(ctx, a, store.DriverFilter{JobTitle: title.name, Limit: 25})
		if err != nil || len(first) != 25 {
			t.Fatalf("%s: the first page by id: %d drivers, %v", title.name, len(first), err)
		}
		for _, f := range []store.DriverFilter{
			{Sort: "name", Limit: 25},
			{Sort: "name", Limit: 25, Offset: 25},
			{Sort: "sent", Descending: true, Limit: 25},
			{Sort: "state", Limit: 25},
			{Sort: "driver_type", Descending: true, Limit: 25},
			{Limit: 25, After: &store.DriverCursor{ID: first[len(first)-1].ID}},
		} {
			f.JobTitle = title.name
			joined, array, joins, err := s.TitlePages(ctx, a, f)
			if err != nil {
				t.Fatal(err)
			}
			if joins != title.walks {
				t.Errorf("%s, sort %q, offset %d: written as a semi-join %v, want %v", title.name, f.Sort, f.Offset, joins, title.walks)
			}
			if len(array) != 25 || !slices.EqualFunc(joined, array, func(x, y store.DriverListItem) bool { return x.ID == y.ID }) {
				t.Errorf("%s, sort %q, offset %d: the semi-join's page %v, the array's %v", title.name, f.Sort, f.Offset, ids(joined), ids(array))
			}
		}
	}
}

// titledApplicants is an account of 2,000 applicants, about 720 of whom
// applied to a job titled "Common Route" and 80 to one titled "Rare Route".
func titledApplicants(t *testing.T) (*store.Store, int64) {
	t.Helper()
	ctx := context.Background()
	s := storetest.Store(t)
	a := storetest.NewAccount(t, s, "titles").AccountID
	var jobs []store.JobFields
	var refs []string
	for i := range 10 {
		j := job(fmt.Sprintf("J%d", i))
		j.Title = "Common Route"
		if i == 0 {
			j.Title = "Rare Route"
		}
		jobs, refs = append(jobs, j), append(refs, j.ReferenceNumber)
	}
	if _, err := s.UpsertJobs(ctx, a, jobs, store.UpsertOptions{MaxActive: 100, Today: time.Now()}); err != nil {
		t.Fatal(err)
	}
	// 40% of the applicants apply to one job each: about 720 to the
	// common title and 80 to the rare one. A page of 25 of 2,000 is walked
	// for 388 applicants or more (walkCostRatio).
	if err := s.SeedApplications(ctx, a, demo.Applications(a, 2000, 7, time.Now(), refs, "t.")); err != nil {
		t.Fatal(err)
	}
	return s, a
}

// TestJobTitleWithOtherFilters: a job title with any other filter is
// written as a semi-join, common or rare, and its page and count are those
// of the array of the title's applicants and of the other filters alone.
func TestJobTitleWithOtherFilters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, a := titledApplicants(t)
	yes := true
	for _, title := range []string{"Common Route", "rare route"} {
		for _, f := range []store.DriverFilter{
			{State: "TX", Limit: 25},
			{State: "TX", Sort: "name", Limit: 25},
			{DriverType: "Company Driver", Sort: "sent", Descending: true, Limit: 25},
			{DriverType: "Owner Operator", HasJobApps: &yes, Sort: "state", Limit: 25, Offset: 10},
		} {
			f.JobTitle = title
			joined, array, joins, err := s.TitlePages(ctx, a, f)
			if err != nil {
				t.Fatal(err)
			}
			if !joins {
				t.Errorf("%s with %+v: written as the array, want the semi-join", title, f)
			}
			if len(array) == 0 || !slices.EqualFunc(joined, array, func(x, y store.DriverListItem) bool { return x.ID == y.ID }) {
				t.Errorf("%s with %+v: the semi-join's page %v, the array's %v", title, f, ids(joined), ids(array))
			}
			// The count, against the title's applicants among all the
			// other filters' matches, listed whole.
			_, total, err := s.ListDrivers(ctx, a, f)
			if err != nil {
				t.Fatal(err)
			}
			g := f
			g.JobTitle, g.Limit, g.Offset = "", 5000, 0
			others, _, err := s.ListDrivers(ctx, a, g)
			if err != nil {
				t.Fatal(err)
			}
			titled, _, err := s.ListDrivers(ctx, a, store.DriverFilter{JobTitle: title, Limit: 5000})
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, d := range others {
				if slices.ContainsFunc(titled, func(x store.DriverListItem) bool { return x.ID == d.ID }) {
					want++
				}
			}
			if total != int64(want) || want == 0 {
				t.Errorf("%s with %+v: counted %d, want %d (not 0)", title, f, total, want)
			}
		}
	}
}

// TestRadiusPageWalked: a radius listed in id, name, date or driver type
// order walks that order when the radius holds enough of the account that
// a page is found soon, and reads the radius's box otherwise; in state
// order a radius of ten pages or more is read a state at a time. Both
// forms give the same page and count. A radius with a filter the location
// counts do not hold reads the box.
func TestRadiusPageWalked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Store(t)
	a := storetest.NewAccount(t, s, "radius forms").AccountID
	if err := s.SeedApplications(ctx, a, demo.Applications(a, 1500, 5, time.Now(), nil, "r.")); err != nil {
		t.Fatal(err)
	}
	var home store.Radius
	var homeState string
	if err := s.DB().QueryRowContext(ctx, `SELECT latitude, longitude, state FROM applications
		WHERE account_id = $1 AND latitude IS NOT NULL ORDER BY driver_id LIMIT 1`, a).Scan(&home.Latitude, &home.Longitude, &homeState); err != nil {
		t.Fatal(err)
	}
	wide, near := home, home
	wide.Miles, near.Miles = 3000, 1
	none := false
	first, _, err := s.ListDrivers(ctx, a, store.DriverFilter{Radius: &wide, Limit: 25})
	if err != nil || len(first) != 25 {
		t.Fatalf("the first page of %v miles: %d drivers, %v", wide.Miles, len(first), err)
	}
	firstByName, _, err := s.ListDrivers(ctx, a, store.DriverFilter{Radius: &wide, Sort: "name", Limit: 25})
	if err != nil || len(firstByName) != 25 {
		t.Fatalf("the first page of %v miles by name: %d drivers, %v", wide.Miles, len(firstByName), err)
	}
	byNameAfter := store.CursorOf(firstByName[24])
	// A page of 4 after a cursor by state walks the states whose part
	// holds 40 matches or more and sorts the others' parts: the cursors
	// start inside the largest state and inside a small one.
	var large, small store.DriverCursor
	large.Keys, small.Keys = make([]string, 1), make([]string, 1)
	if err := s.DB().QueryRowContext(ctx, `WITH s AS (SELECT state, count(*) AS n,
		       percentile_disc(0.5) WITHIN GROUP (ORDER BY driver_id) AS middle
		  FROM applications WHERE account_id = $1 AND latitude IS NOT NULL GROUP BY state)
		SELECT (SELECT state FROM s WHERE n >= 40 ORDER BY n DESC, state LIMIT 1),
		       (SELECT middle FROM s WHERE n >= 40 ORDER BY n DESC, state LIMIT 1),
		       (SELECT state FROM s WHERE n BETWEEN 8 AND 39 ORDER BY n, state LIMIT 1),
		       (SELECT middle FROM s WHERE n BETWEEN 8 AND 39 ORDER BY n, state LIMIT 1)`,
		a).Scan(&large.Keys[0], &large.ID, &small.Keys[0], &small.ID); err != nil {
		t.Fatalf("a state of 40 applicants or more and one of 8 to 39: %v", err)
	}
	half := home
	half.Miles = 1200
	for _, tt := range []struct {
		name  string
		f     store.DriverFilter
		walks bool
	}{
		{"wide", store.DriverFilter{Radius: &wide, Limit: 25}, true},
		{"wide, second page", store.DriverFilter{Radius: &wide, Limit: 25, Offset: 25}, true},
		{"wide, after a cursor", store.DriverFilter{Radius: &wide, Limit: 25, After: &store.DriverCursor{ID: first[24].ID}}, true},
		{"wide, with a driver type", store.DriverFilter{Radius: &wide, DriverType: "Student", Limit: 25}, true},
		{"wide, without job applications", store.DriverFilter{Radius: &wide, HasJobApps: &none, Limit: 25}, true},
		// The counts hold no radius with a state: the walk would test the
		// place of each of the state's applicants.
		{"wide, with a state", store.DriverFilter{Radius: &wide, State: homeState, Limit: 25}, false},
		{"wide, by name", store.DriverFilter{Radius: &wide, Sort: "name", Limit: 25}, true},
		{"wide, by name, after a cursor", store.DriverFilter{Radius: &wide, Sort: "name", Limit: 25, After: &byNameAfter}, true},
		{"wide, by name descending", store.DriverFilter{Radius: &wide, Sort: "name", Descending: true, Limit: 25}, true},
		{"wide, newest first", store.DriverFilter{Radius: &wide, Sort: "sent", Descending: true, Limit: 25}, true},
		{"wide, by driver type, second page", store.DriverFilter{Radius: &wide, Sort: "driver_type", Limit: 25, Offset: 25}, true},
		{"wide, with a driver type, by name", store.DriverFilter{Radius: &wide, DriverType: "Student", Sort: "name", Limit: 25}, true},
		// A state at a time, each walked or its part sorted.
		{"wide, by state", store.DriverFilter{Radius: &wide, Sort: "state", Limit: 25}, true},
		{"wide, by state, second page", store.DriverFilter{Radius: &wide, Sort: "state", Limit: 25, Offset: 25}, true},
		{"wide, by state, inside the largest state", store.DriverFilter{Radius: &wide, Sort: "state", Limit: 4, After: &large}, true},
		{"wide, by state, inside a small state", store.DriverFilter{Radius: &wide, Sort: "state", Limit: 4, After: &small}, true},
		{"wide, by state descending", store.DriverFilter{Radius: &wide, Sort: "state", Descending: true, Limit: 25}, true},
		{"wide, by state descending, inside the largest state", store.DriverFilter{Radius: &wide, Sort: "state",
			Descending: true, Limit: 4, After: &large}, true},
		{"wide, by state descending, inside a small state", store.DriverFilter{Radius: &wide, Sort: "state",
			Descending: true, Limit: 4, After: &small}, true},
		{"wide, with a driver type, by state", store.DriverFilter{Radius: &wide, DriverType: "Student", Sort: "state",
			Limit: 2, After: &large}, true},
		{"1200 miles, by state", store.DriverFilter{Radius: &half, Sort: "state", Limit: 4, After: &large}, true},
		{"near, by state", store.DriverFilter{Radius: &near, Sort: "state", Limit: 10}, false},
		{"near", store.DriverFilter{Radius: &near, Limit: 25}, false},
	} {
		walked, boxed, walks, err := s.RadiusPages(ctx, a, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		if walks != tt.walks {
			t.Errorf("%s: walked %v, want %v", tt.name, walks, tt.walks)
		}
		if len(boxed) == 0 || !slices.EqualFunc(walked, boxed, func(x, y store.DriverListItem) bool { return x.ID == y.ID }) {
			t.Errorf("%s: the walk's page %v, the box's %v", tt.name, ids(walked), ids(boxed))
		}
	}
}

func ids(items []store.DriverListItem) []int64 {
	out := make([]int64, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

// TestDriverPageMadeOnce: the page's rows are read into a slice made for
// the page, not grown row by row, and a large page that matches few
// drivers is not made full size.
func TestDriverPageMadeOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Store(t)
	a := storetest.NewAccount(t, s, "page room").AccountID
	if err := s.SeedApplications(ctx, a, demo.Applications(a, 300, 11, time.Now(), nil, "p.")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name          string
		f             store.DriverFilter
		rows, maxRoom int
	}{
		{"a full page by id", store.DriverFilter{Limit: 100}, 100, 100},
		{"a full page by name", store.DriverFilter{Sort: "name", Limit: 40}, 40, 40},
		{"the last, short page", store.DriverFilter{Limit: 100, Offset: 250}, 50, 100},
		// Room for 250 is made, then grown once: never room for 1,000.
		{"a page of 1,000 of 300 drivers", store.DriverFilter{Limit: 1000}, 300, 600},
	} {
		t.Run(tt.name, func(t *testing.T) {
			items, _, err := s.ListDrivers(ctx, a, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			// Grown by append from nothing, 100 rows would have room for
			// 128, and 40 for 64.
			if len(items) != tt.rows || cap(items) > tt.maxRoom {
				t.Errorf("%d rows in room for %d; want %d rows in room for at most %d", len(items), cap(items), tt.rows, tt.maxRoom)
			}
		})
	}
}
