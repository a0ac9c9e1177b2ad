package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/server/drivers"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/timestamppb"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/call"
)

// profileFixture: Pat applies to accounts A and B with the same e-mail (in
// different case) and a different address, accidents, employer, driver
// type, experience and certifications in each.
type profileFixture struct {
	drivers      *drivers.Service
	intake       *drivers.IntakeService
	ctx          context.Context // the intake's caller
	idA, idB     int64           // Pat's id as each submission returned it
	acctA, acctB int64
	ctxA, ctxB   context.Context
}

// patApplication is Pat's application as a gRPC caller sends it; sent is RFC 3339.
func patApplication(email, address, city, state, zip, accidents, employer, sent string) *jobboardv2.DriverApplication {
	at, err := time.Parse(time.RFC3339, sent)
	if err != nil {
		panic(err)
	}
	return &jobboardv2.DriverApplication{FirstName: "Pat", LastName: "Quinn", Address: address, City: city,
		State: state, Zip: zip, Email: email, Phone: "212-555-0118", Experience: "4",
		DriverType:        jobboardv2.DriverType_DRIVER_TYPE_COMPANY_DRIVER,
		Sent:              timestamppb.New(at),
		Certifications:    []jobboardv2.Certification{jobboardv2.Certification_CERTIFICATION_HAZMAT},
		Accidents:         new(accidents),
		EmploymentHistory: []*jobboardv2.Employment{{Company: employer, State: state, Phone: "2125550111", StartDate: "2020-01-01"}}}
}

func newProfileFixture(t *testing.T) *profileFixture {
	t.Helper()
	st, a, b := twoAccounts(t)
	ctx := context.Background()
	f := &profileFixture{drivers: drivers.New(st), intake: drivers.NewIntake(st, testOutbox(t, st)),
		ctx: call.WithCaller(ctx, call.Caller{Internal: true}), acctA: a.AccountID, acctB: b.AccountID,
		ctxA: call.WithCaller(ctx, call.Caller{AccountID: a.AccountID}), ctxB: call.WithCaller(ctx, call.Caller{AccountID: b.AccountID})}
	f.idA = f.submit(t, a.AccountID, patApplication("pat@example.com", "1 Alpha Rd", "Omaha", "NE", "68102", "none", "AlphaCo", "2026-01-10T10:00:00Z"))
	bApp := patApplication("PAT@Example.com", "2 Bravo Ave", "Dallas", "TX", "75201", "two in 2024", "BravoCo", "2026-02-10T10:00:00Z")
	bApp.DriverType, bApp.Experience = jobboardv2.DriverType_DRIVER_TYPE_OWNER_OPERATOR, "12"
	bApp.Certifications = []jobboardv2.Certification{jobboardv2.Certification_CERTIFICATION_TANKER_HAZMAT}
	f.idB = f.submit(t, b.AccountID, bApp)
	return f
}

func (f *profileFixture) submit(t *testing.T, account int64, app *jobboardv2.DriverApplication) int64 {
	t.Helper()
	resp, err := f.intake.SubmitApplication(f.ctx, &jobboardv2.SubmitApplicationRequest{AccountId: account, Application: app})
	if err != nil {
		t.Fatalf("submit to %d: %v", account, err)
	}
	return resp.DriverId
}

// view is everything an account is shown of Pat: the list row and the detail.
func (f *profileFixture) view(t *testing.T, ctx context.Context, id int64) string {
	t.Helper()
	list, err := f.drivers.ListDrivers(ctx, &restv2.ListDriversRequest{})
	if err != nil || len(list.Drivers) != 1 {
		t.Fatalf("list: %v %v", list, err)
	}
	detail, err := f.drivers.GetDriver(ctx, &restv2.GetDriverRequest{Id: id})
	if err != nil {
		t.Fatalf("detail: %v", err)
	}
	return protojson.Format(list) + protojson.Format(detail)
}

// TestDriverProfilePerAccount: each account sees the profile and employment
// history of the applications sent to it, never another account's, under
// one driver id; a later application to one account leaves the other's
// view as it was, and an older one arriving late leaves its own account's.
func TestDriverProfilePerAccount(t *testing.T) {
	f := newProfileFixture(t)
	if f.idA != f.idB {
		t.Fatalf("one e-mail, two driver ids: %d and %d", f.idA, f.idB)
	}
	aValues := []string{"pat@example.com", "1 Alpha Rd", "Omaha", `"NE"`, "68102", `"none"`, "AlphaCo", "Company Driver", `"4"`, "HAZMAT (H)", "2026-01-10T10:00:00"}
	bValues := []string{"PAT@Example.com", "2 Bravo Ave", "Dallas", `"TX"`, "75201", "two in 2024", "BravoCo", "Owner Operator", `"12"`, "Tanker + HAZMAT (X)", "2026-02-10T10:00:00"}
	views := []struct {
		name      string
		ctx       context.Context
		own, none []string
	}{
		{"account A", f.ctxA, aValues, bValues},
		{"account B", f.ctxB, bValues, aValues},
	}
	for _, v := range views {
		t.Run(v.name, func(t *testing.T) {
			shown := f.view(t, v.ctx, f.idA)
			for _, s := range v.own {
				if !strings.Contains(shown, s) {
					t.Errorf("does not show its own %s:\n%s", s, shown)
				}
			}
			for _, s := range v.none {
				if strings.Contains(shown, s) {
					t.Errorf("shows the other account's %s:\n%s", s, shown)
				}
			}
		})
	}
	// The filters compare each account's own values.
	filters := []struct {
		name string
		ctx  context.Context
		req  *restv2.ListDriversRequest
		want int
	}{
		{"A by A's state", f.ctxA, &restv2.ListDriversRequest{State: "NE"}, 1},
		{"A by B's state", f.ctxA, &restv2.ListDriversRequest{State: "TX"}, 0},
		{"A by B's certification", f.ctxA, &restv2.ListDriversRequest{Certifications: "X"}, 0},
		{"A by B's experience", f.ctxA, &restv2.ListDriversRequest{MinExperience: "10"}, 0},
		{"A by B's driver type", f.ctxA, &restv2.ListDriversRequest{DriverType: "Owner Operator"}, 0},
		{"A by B's home", f.ctxA, &restv2.ListDriversRequest{LivesWithinRadius: "10", LivesWithinZip: "75201"}, 0},
		{"B by B's home", f.ctxB, &restv2.ListDriversRequest{LivesWithinRadius: "10", LivesWithinZip: "75201"}, 1},
		{"B by A's state", f.ctxB, &restv2.ListDriversRequest{State: "NE"}, 0},
		{"B by the e-mail in A's case", f.ctxB, &restv2.ListDriversRequest{Email: "pat@example.com"}, 1},
	}
	for _, c := range filters {
		t.Run(c.name, func(t *testing.T) {
			resp, err := f.drivers.ListDrivers(c.ctx, c.req)
			if err != nil || resp.TotalCount != int64(c.want) || len(resp.Drivers) != c.want {
				t.Errorf("got %v (%v), want %d", resp, err, c.want)
			}
		})
	}
}

// TestDriverProfileLaterApplications: a newer application to B changes B's
// view only; an older application to A, arriving after its newer one,
// changes nothing A is shown.
func TestDriverProfileLaterApplications(t *testing.T) {
	f := newProfileFixture(t)
	beforeA := f.view(t, f.ctxA, f.idA)
	f.submit(t, f.acctB, patApplication("pat@example.com", "3 Charlie Ct", "Austin", "TX", "73301", "one", "CharlieCo", "2026-03-01T10:00:00Z"))
	if got := f.view(t, f.ctxA, f.idA); got != beforeA {
		t.Errorf("B's new application changed A's view:\nbefore %s\nafter  %s", beforeA, got)
	}
	if got := f.view(t, f.ctxB, f.idB); !strings.Contains(got, "3 Charlie Ct") || strings.Contains(got, "2 Bravo Ave") || strings.Contains(got, "BravoCo") {
		t.Errorf("B's view after B's newer application:\n%s", got)
	}
	f.submit(t, f.acctA, patApplication("pat@example.com", "0 Old St", "Lincoln", "NE", "68508", "many", "OldCo", "2025-12-01T10:00:00Z"))
	if got := f.view(t, f.ctxA, f.idA); got != beforeA {
		t.Errorf("an older application to A changed A's view:\nbefore %s\nafter  %s", beforeA, got)
	}
}

// TestSentInTheFuture: a sent more than five minutes ahead of the server's
// clock is refused, naming the field, the value and the rule; four minutes
// ahead (a sender's clock running fast) is accepted.
func TestSentInTheFuture(t *testing.T) {
	f := newProfileFixture(t)
	tests := []struct {
		name  string
		ahead time.Duration
		want  codes.Code
	}{
		{"six minutes ahead", 6 * time.Minute, codes.InvalidArgument},
		{"a year ahead", 365 * 24 * time.Hour, codes.InvalidArgument},
		{"four minutes ahead", 4 * time.Minute, codes.OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sent := time.Now().Add(tt.ahead).UTC().Format(time.RFC3339)
			app := patApplication("pat@example.com", "9 Future Way", "Omaha", "NE", "68102", "none", "AlphaCo", sent)
			_, err := f.intake.SubmitApplication(f.ctx, &jobboardv2.SubmitApplicationRequest{AccountId: f.acctA, Application: app})
			if status.Code(err) != tt.want {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if tt.want == codes.OK {
				return
			}
			msg := status.Convert(err).Message()
			if want := `sent: "` + sent + `" is more than 5 minutes after the server's time`; !strings.HasPrefix(msg, want) {
				t.Errorf("message %q, want it to start with %q", msg, want)
			}
			if shown := f.view(t, f.ctxA, f.idA); strings.Contains(shown, "9 Future Way") {
				t.Errorf("a refused application is shown:\n%s", shown)
			}
		})
	}
}
