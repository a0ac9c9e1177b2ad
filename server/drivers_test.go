package server

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/server/drivers"

	"github.com/truckjobs/jobboard/server/jobs"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/intake"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// applicant builds an application; edit adjusts it.
func applicant(first, last, state, zip, driverType, experience, sent string, endorsements ...string) *intake.Application {
	return &intake.Application{
		FirstName: first, LastName: last, Address: "1 Main St", City: "Town", State: state, Zip: zip,
		Email: strings.ToLower(first+"."+last) + "@example.com", Phone: "212-555-01" + fmt.Sprint(10+len(first+last)),
		DriverType: driverType, Experience: experience, Sent: sent, Endorsements: endorsements,
	}
}

// driversFixture: account A with five applicants who differ in every filter,
// account B with Ann (applying later, from a new phone) and one more.
type driversFixture struct {
	st         *store.Store
	drivers    *drivers.Service
	ctxA, ctxB context.Context
	id         map[string]int64 // by first name
}

// twoAccounts is a fresh database with accounts A and B.
func twoAccounts(t *testing.T) (*store.Store, storetest.Account, storetest.Account) {
	t.Helper()
	st := storetest.Store(t)
	return st, storetest.NewAccount(t, st, "A"), storetest.NewAccount(t, st, "B")
}

func newDriversFixture(t *testing.T) *driversFixture {
	t.Helper()
	st, a, b := twoAccounts(t)
	ctx := context.Background()
	ctxA := call.WithCaller(ctx, call.Caller{AccountID: a.AccountID})
	jobSvc := jobs.New(st, nowFunc)
	j1, j2 := input("J1"), input("J2")
	j1.Title, j2.Title = new("OTR Driver"), new("Local Driver")
	if _, err := jobSvc.PostJobs(ctxA, &restv2.PostJobsRequest{Jobs: []*restv2.JobInput{j1, j2}}); err != nil {
		t.Fatal(err)
	}

	ann := applicant("Ann", "Lee", "NY", "10001", "Company Driver", "0.5", "2026-01-05T10:00:00Z", "T")
	ann.Phone = "(212) 555-0101"
	ann.JobApplications = []intake.JobApplication{{Reference: "J1", IsDirectApp: true}}
	bob := applicant("Bob", "Smith", "nj", "07030", "owner operator", "3", "2026-01-31T23:59:59Z", "H", "N")
	bob.Phone = "+1 201 555 0102"
	cara := applicant("Cara", "Diaz", "PA", "19103", "Student", "10", "2026-02-01", "X")
	cara.JobApplications = []intake.JobApplication{{Reference: "J2", CreatedAt: "2026-02-02T08:00:00+0100"}}
	dan := applicant("Dan", "Brown", "TX", "73301", "Company Driver", "1.5", "2025-12-31T23:59:59+00:00")
	eve := applicant("Eve", "Smith", "CA", "99999", "Owner Operator", "2", "2026-01-15T12:00:00")
	ids, err := drivers.ImportApplications(ctx, st, testOutbox(t, st), a.AccountID, []*intake.Application{ann, bob, cara, dan, eve})
	if err != nil {
		t.Fatal(err)
	}
	annLater := applicant("Ann", "Lee", "NY", "10001", "Company Driver", "0.5", "2026-03-01T09:00:00Z", "T")
	annLater.Phone = "212 555 0199"
	finn := applicant("Finn", "Ray", "OH", "43215", "Student", "0", "2026-03-02T09:00:00Z")
	if _, err := drivers.ImportApplications(ctx, st, testOutbox(t, st), b.AccountID, []*intake.Application{annLater, finn}); err != nil {
		t.Fatal(err)
	}
	// A job deleted after drivers applied to it still counts for them.
	if _, err := jobSvc.DeleteJobByReference(ctxA, &restv2.DeleteJobByReferenceRequest{ReferenceNumber: "J2"}); err != nil {
		t.Fatal(err)
	}
	return &driversFixture{
		st: st, drivers: drivers.New(st), ctxA: ctxA,
		ctxB: call.WithCaller(ctx, call.Caller{AccountID: b.AccountID}),
		id:   map[string]int64{"Ann": ids[0], "Bob": ids[1], "Cara": ids[2], "Dan": ids[3], "Eve": ids[4]},
	}
}

// names lists first names in the order returned.
func (f *driversFixture) names(t *testing.T, ctx context.Context, req *restv2.ListDriversRequest) []string {
	t.Helper()
	resp, err := f.drivers.ListDrivers(ctx, req)
	if err != nil {
		t.Fatalf("ListDrivers(%v): %v", req, err)
	}
	out := []string{}
	for _, d := range resp.Drivers {
		out = append(out, d.FirstName)
	}
	return out
}

func TestListDriversFilters(t *testing.T) {
	f := newDriversFixture(t)
	tests := []struct {
		name string
		req  *restv2.ListDriversRequest
		want []string // in id order
	}{
		{"no filter", &restv2.ListDriversRequest{}, []string{"Ann", "Bob", "Cara", "Dan", "Eve"}},
		{"certifications code", &restv2.ListDriversRequest{Certifications: "H"}, []string{"Bob"}},
		{"certifications label", &restv2.ListDriversRequest{Certifications: "tanker + hazmat (x)"}, []string{"Cara"}},
		{"driver_type", &restv2.ListDriversRequest{DriverType: "Owner Operator"}, []string{"Bob", "Eve"}},
		{"email any case", &restv2.ListDriversRequest{Email: "CARA.DIAZ@example.com"}, []string{"Cara"}},
		{"email invalid matches nothing", &restv2.ListDriversRequest{Email: "not-an-email"}, []string{}},
		{"phone digits", &restv2.ListDriversRequest{Phone: "2015550102"}, []string{"Bob"}},
		{"phone with +1 and punctuation", &restv2.ListDriversRequest{Phone: "+1 (201) 555-0102"}, []string{"Bob"}},
		{"phone sent to this account", &restv2.ListDriversRequest{Phone: "2125550101"}, []string{"Ann"}},
		// Ann's newer phone went to account B only.
		{"phone sent to another account", &restv2.ListDriversRequest{Phone: "2125550199"}, []string{}},
		{"phone invalid matches nothing", &restv2.ListDriversRequest{Phone: "12"}, []string{}},
		{"start_date bare", &restv2.ListDriversRequest{StartDate: "2026-01-31"}, []string{"Bob", "Cara"}},
		{"end_date bare is the whole day", &restv2.ListDriversRequest{EndDate: "2026-01-31"}, []string{"Ann", "Bob", "Dan", "Eve"}},
		{"january", &restv2.ListDriversRequest{StartDate: "2026-01-01", EndDate: "2026-01-31"}, []string{"Ann", "Bob", "Eve"}},
		{"end_date time is exclusive", &restv2.ListDriversRequest{EndDate: "2026-02-01T00:00:00Z"}, []string{"Ann", "Bob", "Dan", "Eve"}},
		{"start_date with offset", &restv2.ListDriversRequest{StartDate: "2026-01-31T18:59:59-0500"}, []string{"Bob", "Cara"}},
		{"start_date with + decoded as a space", &restv2.ListDriversRequest{StartDate: "2026-02-01T04:59:59 05:00"}, []string{"Bob", "Cara"}},
		{"certification label with + decoded as a space", &restv2.ListDriversRequest{Certifications: "Tanker   HAZMAT (X)"}, []string{"Cara"}},
		{"first_name any case", &restv2.ListDriversRequest{FirstName: "dAN"}, []string{"Dan"}},
		{"last_name", &restv2.ListDriversRequest{LastName: "smith"}, []string{"Bob", "Eve"}},
		{"has_job_apps 1", &restv2.ListDriversRequest{HasJobApps: "1"}, []string{"Ann", "Cara"}},
		{"has_job_apps false", &restv2.ListDriversRequest{HasJobApps: "false"}, []string{"Bob", "Dan", "Eve"}},
		{"job_title", &restv2.ListDriversRequest{JobTitle: "otr driver"}, []string{"Ann"}},
		{"job_title of a deleted job", &restv2.ListDriversRequest{JobTitle: "Local Driver"}, []string{"Cara"}},
		{"min_experience 1.5", &restv2.ListDriversRequest{MinExperience: "1.5"}, []string{"Bob", "Cara", "Dan", "Eve"}},
		{"min_experience 10", &restv2.ListDriversRequest{MinExperience: "10"}, []string{"Cara"}},
		{"min_experience 0", &restv2.ListDriversRequest{MinExperience: "0"}, []string{"Ann", "Bob", "Cara", "Dan", "Eve"}},
		{"state", &restv2.ListDriversRequest{State: "tx"}, []string{"Dan"}},
		{"radius from a PO-box ZIP", &restv2.ListDriversRequest{LivesWithinRadius: "1", LivesWithinZip: "73301"}, []string{"Dan"}},
		{"combined", &restv2.ListDriversRequest{LastName: "Smith", DriverType: "Owner Operator", MinExperience: "3"}, []string{"Bob"}},
		{"combined to nothing", &restv2.ListDriversRequest{State: "NY", HasJobApps: "0"}, []string{}},
		{"unknown home ZIP never in a radius", &restv2.ListDriversRequest{LivesWithinRadius: "500", LivesWithinZip: "90210"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := f.names(t, f.ctxA, tt.req); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestListDriversRadius checks membership just inside and outside real
// distances between ZIP centroids.
func TestListDriversRadius(t *testing.T) {
	f := newDriversFixture(t)
	for _, tt := range []struct {
		from, to, driver string
		lo, hi           float64 // plausible distance in miles
	}{
		{"10001", "07030", "Bob", 1, 4},
		{"10001", "19103", "Cara", 75, 90},
	} {
		d := f.distance(t, tt.from, tt.to)
		if d < tt.lo || d > tt.hi {
			t.Fatalf("%s to %s is %.2f miles, want %v-%v", tt.from, tt.to, d, tt.lo, tt.hi)
		}
		below, above := int(math.Floor(d)), int(math.Ceil(d))
		for _, c := range []struct {
			radius int
			in     bool
		}{{below, false}, {above, true}} {
			got := f.names(t, f.ctxA, &restv2.ListDriversRequest{LivesWithinZip: tt.from, LivesWithinRadius: fmt.Sprint(c.radius)})
			if slices.Contains(got, tt.driver) != c.in {
				t.Errorf("%s (%.2f miles from %s) within %d miles: got %v", tt.driver, d, tt.from, c.radius, got)
			}
		}
	}
}

func (f *driversFixture) distance(t *testing.T, a, b string) float64 {
	t.Helper()
	lat1, lon1, err1 := f.st.ZipCentroid(context.Background(), a)
	lat2, lon2, err2 := f.st.ZipCentroid(context.Background(), b)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	rad := math.Pi / 180
	h := math.Pow(math.Sin((lat2-lat1)*rad/2), 2) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Pow(math.Sin((lon2-lon1)*rad/2), 2)
	return 2 * store.EarthRadiusMiles * math.Asin(math.Sqrt(h))
}

func TestListDriversSort(t *testing.T) {
	f := newDriversFixture(t)
	tests := map[string][]string{
		"id":           {"Ann", "Bob", "Cara", "Dan", "Eve"},
		"-id":          {"Eve", "Dan", "Cara", "Bob", "Ann"},
		"name":         {"Dan", "Cara", "Ann", "Bob", "Eve"},
		"-name":        {"Eve", "Bob", "Ann", "Cara", "Dan"},
		"state":        {"Eve", "Bob", "Ann", "Cara", "Dan"},
		"-state":       {"Dan", "Cara", "Ann", "Bob", "Eve"},
		"driver_type":  {"Ann", "Dan", "Bob", "Eve", "Cara"},
		"-driver_type": {"Cara", "Bob", "Eve", "Ann", "Dan"},
		"sent":         {"Dan", "Ann", "Eve", "Bob", "Cara"},
		"-sent":        {"Cara", "Bob", "Eve", "Ann", "Dan"},
	}
	for sort, want := range tests {
		t.Run(sort, func(t *testing.T) {
			if got := f.names(t, f.ctxA, &restv2.ListDriversRequest{Sort: sort}); !slices.Equal(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
}

func TestListDriversPaging(t *testing.T) {
	f := newDriversFixture(t)
	for _, tt := range []struct {
		page     string
		want     []string
		nextPage bool
	}{
		{"", []string{"Ann", "Bob"}, true},
		{"2", []string{"Cara", "Dan"}, true},
		{"3", []string{"Eve"}, false},
		{"4", []string{}, false},
	} {
		resp, err := f.drivers.ListDrivers(f.ctxA, &restv2.ListDriversRequest{Max: "2", Page: tt.page})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range resp.Drivers {
			got = append(got, d.FirstName)
		}
		if !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) || resp.TotalCount != 5 || resp.HasNextPage != tt.nextPage {
			t.Errorf("page %q: got %v total %d next %v", tt.page, got, resp.TotalCount, resp.HasNextPage)
		}
	}
}

func TestListDriversInvalid(t *testing.T) {
	f := newDriversFixture(t)
	tests := []struct {
		req   *restv2.ListDriversRequest
		param string
	}{
		{&restv2.ListDriversRequest{Certifications: "Q"}, `certifications: "Q"`},
		{&restv2.ListDriversRequest{DriverType: "Trucker"}, `driver_type: "Trucker"`},
		{&restv2.ListDriversRequest{StartDate: "yesterday"}, `start_date: "yesterday"`},
		{&restv2.ListDriversRequest{EndDate: "2026-13-01"}, `end_date: "2026-13-01"`},
		{&restv2.ListDriversRequest{HasJobApps: "yes"}, `has_job_apps: "yes"`},
		{&restv2.ListDriversRequest{LivesWithinRadius: "10"}, `lives_within_radius: needs lives_within_zip`},
		{&restv2.ListDriversRequest{LivesWithinZip: "10001"}, `lives_within_zip: needs lives_within_radius`},
		{&restv2.ListDriversRequest{LivesWithinRadius: "0", LivesWithinZip: "10001"}, `lives_within_radius: "0"`},
		{&restv2.ListDriversRequest{LivesWithinRadius: "501", LivesWithinZip: "10001"}, `lives_within_radius: "501"`},
		{&restv2.ListDriversRequest{LivesWithinRadius: "2.5", LivesWithinZip: "10001"}, `lives_within_radius: "2.5"`},
		{&restv2.ListDriversRequest{LivesWithinRadius: "10", LivesWithinZip: "1000"}, `lives_within_zip: "1000"`},
		{&restv2.ListDriversRequest{LivesWithinRadius: "10", LivesWithinZip: "00000"}, `lives_within_zip: "00000" is not valid; it is not a known US ZIP code`},
		{&restv2.ListDriversRequest{MinExperience: "2.5"}, `min_experience: "2.5"`},
		{&restv2.ListDriversRequest{MinExperience: "100"}, `min_experience: "100"`},
		{&restv2.ListDriversRequest{Sort: "email"}, `sort: "email"`},
		{&restv2.ListDriversRequest{State: "PR"}, `state: "PR"`},
		{&restv2.ListDriversRequest{Max: "0"}, `max: "0"`},
		{&restv2.ListDriversRequest{Max: "1001"}, `max: "1001"`},
		{&restv2.ListDriversRequest{Page: "0"}, `page: "0"`},
		{&restv2.ListDriversRequest{Page: "x"}, `page: "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.param, func(t *testing.T) {
			_, err := f.drivers.ListDrivers(f.ctxA, tt.req)
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), tt.param) {
				t.Errorf("got %v, want InvalidArgument naming %s", err, tt.param)
			}
		})
	}
}

func TestDriversIsolationAndProfile(t *testing.T) {
	f := newDriversFixture(t)
	if got := f.names(t, f.ctxB, &restv2.ListDriversRequest{}); !slices.Equal(got, []string{"Ann", "Finn"}) {
		t.Errorf("B sees %v", got)
	}
	if _, err := f.drivers.GetDriver(f.ctxB, &restv2.GetDriverRequest{Id: f.id["Bob"]}); status.Code(err) != codes.NotFound {
		t.Errorf("B reads A's applicant: %v", err)
	}
	// Ann is one driver in both accounts; each account sees its own sent and job applications.
	annA, err := f.drivers.GetDriver(f.ctxA, &restv2.GetDriverRequest{Id: f.id["Ann"]})
	if err != nil {
		t.Fatal(err)
	}
	annB, err := f.drivers.GetDriver(f.ctxB, &restv2.GetDriverRequest{Id: f.id["Ann"]})
	if err != nil {
		t.Fatal(err)
	}
	if annA.Driver.Sent != "2026-01-05T10:00:00+00:00" || annB.Driver.Sent != "2026-03-01T09:00:00+00:00" {
		t.Errorf("sent: A %s, B %s", annA.Driver.Sent, annB.Driver.Sent)
	}
	if annA.Driver.Phone != "(212) 555-0101" || annB.Driver.Phone != "212 555 0199" {
		t.Errorf("phone: A %q, B %q; want each account's own application's", annA.Driver.Phone, annB.Driver.Phone)
	}
	if len(annA.Driver.JobApplications) != 1 || len(annB.Driver.JobApplications) != 0 || annB.Driver.HasJobApps {
		t.Errorf("job applications: A %v, B %v", annA.Driver.JobApplications, annB.Driver.JobApplications)
	}
	cara, err := f.drivers.GetDriver(f.ctxA, &restv2.GetDriverRequest{Id: f.id["Cara"]})
	if err != nil {
		t.Fatal(err)
	}
	ja := cara.Driver.JobApplications
	if len(ja) != 1 || ja[0].Reference != "J2" || ja[0].CreatedAt != "2026-02-02T07:00:00+00:00" || ja[0].JobId == 0 {
		t.Errorf("application to a deleted job: %v", ja)
	}
	if cara.Driver.Endorsement != "Tanker + HAZMAT (X)" || cara.Driver.Sent != "2026-02-01T00:00:00+00:00" {
		t.Errorf("cara: %v", cara.Driver)
	}
}

func TestImportApplicationsRejects(t *testing.T) {
	st := storetest.Store(t)
	ctx := context.Background()
	acct := storetest.NewAccount(t, st, "A")
	good := applicant("Gil", "Ok", "TX", "75201", "Student", "1", "2026-01-01")
	tests := []struct {
		name string
		edit func(a *intake.Application)
		want string
	}{
		{"state", func(a *intake.Application) { a.State = "XX" }, `state: "XX" is not a US state code`},
		{"zip", func(a *intake.Application) { a.Zip = "7520" }, `zip: "7520" is not a ZIP code`},
		{"email", func(a *intake.Application) { a.Email = "gil@" }, `email: "gil@" is not an e-mail address`},
		{"phone", func(a *intake.Application) { a.Phone = "555-01" }, `phone: "555-01" is not a US phone number`},
		{"sent", func(a *intake.Application) { a.Sent = "01/02/2026" }, `sent: "01/02/2026" is not a date`},
		{"sent in the future", func(a *intake.Application) { a.Sent = "2099-01-01" }, `[1] sent: "2099-01-01" is more than 5 minutes after the server's time`},
		{"driver type", func(a *intake.Application) { a.DriverType = "Pilot" }, `driver_type: "Pilot" is not one of`},
		{"experience", func(a *intake.Application) { a.Experience = "lots" }, `experience: "lots" is not a number`},
		{"endorsement", func(a *intake.Application) { a.Endorsements = []string{"Z"} }, `endorsements: "Z" is not one of T, H, N, X`},
		{"birth date", func(a *intake.Application) { a.DateOfBirth = new("31/12/1990") }, `date_of_birth: "31/12/1990" is not a date`},
		{"required", func(a *intake.Application) { a.LastName = " " }, `last_name: is required`},
		{"unknown job", func(a *intake.Application) {
			a.JobApplications = []intake.JobApplication{{Reference: "NOPE"}}
		}, `[1] job_applications[0].reference: "NOPE" is not the reference number of one of the account's jobs`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := applicant("Hal", "Bad", "TX", "75201", "Student", "1", "2026-01-01")
			tt.edit(bad)
			_, err := drivers.ImportApplications(ctx, st, testOutbox(t, st), acct.AccountID, []*intake.Application{good, bad})
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
			var n int
			if err := st.DB().Get(&n, `SELECT count(*) FROM applications`); err != nil || n != 0 {
				t.Errorf("a failed import stored %d applications (%v)", n, err)
			}
		})
	}
}

// TestDriversFoldCaseBeyondASCII: an e-mail or name differing only in the
// case of accented letters is the same driver and matches the filters.
func TestDriversFoldCaseBeyondASCII(t *testing.T) {
	st := storetest.Store(t)
	ctx := context.Background()
	acct := storetest.NewAccount(t, st, "A")
	upper := applicant("JOSÉ", "ÑÚÑEZ", "TX", "75201", "Student", "1", "2026-01-01")
	upper.Email = "ÉMILE@example.com"
	lower := applicant("José", "Ñúñez", "TX", "75201", "Student", "1", "2026-01-02")
	lower.Email = "émile@example.com"
	ids, err := drivers.ImportApplications(ctx, st, testOutbox(t, st), acct.AccountID, []*intake.Application{upper, lower})
	if err != nil {
		t.Fatal(err)
	}
	if ids[0] != ids[1] {
		t.Errorf("ÉMILE@ and émile@ became drivers %d and %d", ids[0], ids[1])
	}
	f := &driversFixture{drivers: drivers.New(st)}
	actx := call.WithCaller(ctx, call.Caller{AccountID: acct.AccountID})
	for _, req := range []*restv2.ListDriversRequest{
		{FirstName: "josé"}, {FirstName: "JOSÉ"}, {LastName: "ñúñez"}, {Email: "Émile@Example.com"},
	} {
		if got := f.names(t, actx, req); len(got) != 1 {
			t.Errorf("%v matched %v", req, got)
		}
	}
}

// TestDriverListQueries checks that the statements DriverListQueries gives
// for a request's filter, run on their own, answer what ListDrivers does,
// including the job-title count that reads application_counts alone, and the
// minimum experience the API never sends.
func TestDriverListQueries(t *testing.T) {
	f := newDriversFixture(t)
	ctx := context.Background()
	caller, err := call.From(f.ctxA)
	if err != nil {
		t.Fatal(err)
	}
	// Gus applied to two jobs of one title in different case: one applicant.
	j3 := input("J3")
	j3.Title = new("otr DRIVER")
	if _, err := jobs.New(f.st, nowFunc).PostJobs(f.ctxA, &restv2.PostJobsRequest{Jobs: []*restv2.JobInput{j3}}); err != nil {
		t.Fatal(err)
	}
	gus := applicant("Gus", "Ortiz", "NY", "10001", "Student", "1", "2026-02-03T10:00:00Z")
	gus.JobApplications = []intake.JobApplication{{Reference: "J1"}, {Reference: "J3"}}
	if _, err := drivers.ImportApplications(ctx, f.st, testOutbox(t, f.st), caller.AccountID, []*intake.Application{gus}); err != nil {
		t.Fatal(err)
	}
	for _, req := range []*restv2.ListDriversRequest{
		{},
		{JobTitle: "OTR Driver"},
		{JobTitle: "OTR Driver", State: "NY"},
		{JobTitle: "Local Driver", Sort: "-name"},
		{JobTitle: "none such"},
		{Certifications: "T"},
		{Certifications: "X", Sort: "sent"},
		{MinExperience: "1.5"},
		{MinExperience: "0", Sort: "-driver_type"},
		{HasJobApps: "0"},
		{DriverType: "Student", Max: "1", Page: "2"},
		{LivesWithinRadius: "100", LivesWithinZip: "10001", Sort: "state"},
		{Email: "not-an-email", JobTitle: "OTR Driver"},
	} {
		t.Run(req.String(), func(t *testing.T) {
			resp, err := f.drivers.ListDrivers(f.ctxA, req)
			if err != nil {
				t.Fatal(err)
			}
			want := []int64{}
			for _, d := range resp.Drivers {
				want = append(want, d.Id)
			}
			filter, err := f.drivers.DriverFilter(f.ctxA, req)
			if err != nil {
				t.Fatal(err)
			}
			page, count, err := f.st.DriverListQueries(f.ctxA, caller.AccountID, filter)
			if err != nil {
				t.Fatal(err)
			}
			var total int64
			if err := f.st.DB().Get(&total, count.SQL, count.Args...); err != nil {
				t.Fatalf("count: %v\n%s", err, count.SQL)
			}
			var items []store.DriverListItem
			if err := f.st.DB().Select(&items, page.SQL, page.Args...); err != nil {
				t.Fatalf("page: %v\n%s", err, page.SQL)
			}
			got := []int64{}
			for _, d := range items {
				got = append(got, d.ID)
			}
			if !slices.Equal(got, want) || total != resp.TotalCount {
				t.Errorf("statements: %v of %d; ListDrivers: %v of %d", got, total, want, resp.TotalCount)
			}
		})
	}
	// The title alone is counted in application_counts; with a condition that
	// keeps everyone, through applications: both count Gus once.
	for _, req := range []*restv2.ListDriversRequest{{JobTitle: "otr driver"}, {JobTitle: "otr driver", MinExperience: "0"}} {
		resp, err := f.drivers.ListDrivers(f.ctxA, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Drivers) != 2 || resp.Drivers[0].FirstName != "Ann" || resp.Drivers[1].FirstName != "Gus" || resp.TotalCount != 2 {
			t.Errorf("%v: got %v of %d, want Ann and Gus of 2", req, resp.Drivers, resp.TotalCount)
		}
	}
	// Store callers may ask for any minimum, not only whole or half years.
	for _, tt := range []struct {
		min  float64
		want []string
	}{
		{1.75, []string{"Bob", "Cara", "Eve"}},
		{1.5, []string{"Bob", "Cara", "Dan", "Eve"}},
		{0.25, []string{"Ann", "Bob", "Cara", "Dan", "Eve", "Gus"}},
		{10.01, []string{}},
		{-1, []string{"Ann", "Bob", "Cara", "Dan", "Eve", "Gus"}},
		{1e6, []string{}},
	} {
		items, total, err := f.st.ListDrivers(ctx, caller.AccountID, store.DriverFilter{Sort: "id", Limit: 100, MinExperience: &tt.min})
		if err != nil {
			t.Fatal(err)
		}
		got := []string{}
		for _, d := range items {
			got = append(got, d.FirstName)
		}
		if !slices.Equal(got, tt.want) || total != int64(len(tt.want)) {
			t.Errorf("min experience %v: got %v of %d, want %v", tt.min, got, total, tt.want)
		}
	}
}

// TestJobTitleFollowsRenamedJobs: the job_title filter reads the title each
// job application carries, which must follow its job when a post renames
// it (an upsert), and ignore a post that only changes the title's case.
func TestJobTitleFollowsRenamedJobs(t *testing.T) {
	f := newDriversFixture(t)
	jobSvc := jobs.New(f.st, nowFunc)
	// names lists the title's applicants through both ways the store reads
	// the title: alone (job_applications only) and with another condition
	// (through applications); both must agree.
	names := func(title string) []string {
		t.Helper()
		var lists [][]string
		for _, req := range []*restv2.ListDriversRequest{{JobTitle: title}, {JobTitle: title, MinExperience: "0"}} {
			resp, err := f.drivers.ListDrivers(f.ctxA, req)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, d := range resp.Drivers {
				got = append(got, d.FirstName)
			}
			if int64(len(got)) != resp.TotalCount {
				t.Errorf("%v: %d drivers listed of %d", req, len(got), resp.TotalCount)
			}
			lists = append(lists, got)
		}
		if !slices.Equal(lists[0], lists[1]) {
			t.Errorf("title %q alone lists %v, with another condition %v", title, lists[0], lists[1])
		}
		return lists[0]
	}
	rename := func(ref, title string) {
		t.Helper()
		j := input(ref)
		j.Title = &title
		if _, err := jobSvc.PostJobs(f.ctxA, &restv2.PostJobsRequest{Jobs: []*restv2.JobInput{j, input("J9")}}); err != nil {
			t.Fatal(err)
		}
	}
	if got := names("OTR Driver"); !slices.Equal(got, []string{"Ann"}) {
		t.Fatalf("before the rename: %v", got)
	}
	rename("J1", "Regional Driver")
	if got := names("OTR Driver"); len(got) != 0 {
		t.Errorf("the old title still lists %v", got)
	}
	if got := names("regional driver"); !slices.Equal(got, []string{"Ann"}) {
		t.Errorf("the new title lists %v, want Ann", got)
	}
	rename("J1", "REGIONAL driver")
	if got := names("Regional Driver"); !slices.Equal(got, []string{"Ann"}) {
		t.Errorf("after a change of case: %v, want Ann", got)
	}
	var stale int
	if err := f.st.DB().Get(&stale, `SELECT count(*) FROM job_applications ja JOIN jobs j ON j.id = ja.job_id
		WHERE ja.job_title_lower <> lower(j.title)`); err != nil || stale != 0 {
		t.Errorf("%d job applications carry a title their job no longer has (%v)", stale, err)
	}
}
