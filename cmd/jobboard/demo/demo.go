// Package demo makes realistic, varied synthetic drivers for the demo
// account and for benchmarks. Output is deterministic for a given seed.
package demo

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/internal/usstate"
	"github.com/truckjobs/jobboard/server/store"
)

// place is a home location: a real ZIP with its city and state.
type place struct{ city, state, zip string }

// places spread drivers over every state and DC, with extra weight on
// freight hubs.
var places = []place{
	{"Birmingham", "AL", "35203"}, {"Anchorage", "AK", "99501"}, {"Phoenix", "AZ", "85004"},
	{"Little Rock", "AR", "72201"}, {"Fresno", "CA", "93721"}, {"Ontario", "CA", "91761"},
	{"Denver", "CO", "80202"}, {"Hartford", "CT", "06103"}, {"Wilmington", "DE", "19801"},
	{"Jacksonville", "FL", "32202"}, {"Atlanta", "GA", "30303"}, {"Honolulu", "HI", "96813"},
	{"Boise", "ID", "83702"}, {"Joliet", "IL", "60432"}, {"Indianapolis", "IN", "46204"},
	{"Des Moines", "IA", "50309"}, {"Wichita", "KS", "67202"}, {"Louisville", "KY", "40202"},
	{"Shreveport", "LA", "71101"}, {"Portland", "ME", "04101"}, {"Baltimore", "MD", "21202"},
	{"Worcester", "MA", "01608"}, {"Detroit", "MI", "48226"}, {"Minneapolis", "MN", "55401"},
	{"Jackson", "MS", "39201"}, {"Joplin", "MO", "64801"}, {"Billings", "MT", "59101"},
	{"Omaha", "NE", "68102"}, {"Reno", "NV", "89501"}, {"Manchester", "NH", "03101"},
	{"Newark", "NJ", "07102"}, {"Hoboken", "NJ", "07030"}, {"Albuquerque", "NM", "87102"},
	{"New York", "NY", "10001"}, {"Buffalo", "NY", "14202"}, {"Charlotte", "NC", "28202"},
	{"Fargo", "ND", "58102"}, {"Columbus", "OH", "43215"}, {"Tulsa", "OK", "74103"},
	{"Portland", "OR", "97204"}, {"Philadelphia", "PA", "19103"}, {"Harrisburg", "PA", "17101"},
	{"Providence", "RI", "02903"}, {"Columbia", "SC", "29201"}, {"Sioux Falls", "SD", "57104"},
	{"Memphis", "TN", "38103"}, {"Dallas", "TX", "75201"}, {"Houston", "TX", "77002"},
	{"Laredo", "TX", "78040"}, {"Salt Lake City", "UT", "84101"}, {"Burlington", "VT", "05401"},
	{"Richmond", "VA", "23219"}, {"Spokane", "WA", "99201"}, {"Washington", "DC", "20001"},
	{"Charleston", "WV", "25301"}, {"Milwaukee", "WI", "53202"}, {"Cheyenne", "WY", "82001"},
}

var (
	firstNames = []string{"James", "Maria", "Robert", "Linda", "Michael", "Patricia", "David", "Jennifer",
		"Carlos", "Angela", "William", "Tasha", "Jose", "Karen", "Darnell", "Nancy", "Thomas", "Lisa",
		"Luis", "Brenda", "Kevin", "Rosa", "Brian", "Donna", "Tyrone", "Amy", "Steven", "Keisha", "Paul", "Megan"}
	lastNames = []string{"Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis",
		"Rodriguez", "Martinez", "Hernandez", "Lopez", "Wilson", "Anderson", "Thomas", "Taylor", "Moore",
		"Jackson", "Martin", "Lee", "Perez", "Thompson", "White", "Harris", "Clark", "Lewis", "Walker", "Young"}
	driverTypes = []string{"Company Driver", "Company Driver", "Owner Operator", "Student"}
	experiences = []string{"0", "0.5", "1", "1.5", "2", "3", "4", "5", "7", "10", "12", "15", "20", "25"}
	streets     = []string{"Main St", "Oak Ave", "Maple Dr", "Cedar Ln", "Industrial Blvd", "Elm St", "Route 9", "Highland Ave"}
	classes     = []string{"A", "A", "A", "B"}
)

// Applications returns n synthetic applications to accountID, sent in the
// 180 days before now. Job applications name the given job references;
// emailTag keeps e-mail addresses unique across calls.
func Applications(accountID int64, n int, seed uint64, now time.Time, jobRefs []string, emailTag string) []store.Application {
	r := rand.New(rand.NewPCG(seed, 0x6a6f62626f617264))
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	apps := make([]store.Application, n)
	for i := range apps {
		first, last, home := pick(firstNames), pick(lastNames), places[r.IntN(len(places))]
		sent := now.Add(-time.Duration(r.Int64N(int64(180 * 24 * time.Hour)))).Truncate(time.Second).UTC()
		var endorsements []string
		for _, code := range []string{"T", "H", "N", "X"} {
			if r.IntN(4) == 0 {
				endorsements = append(endorsements, code)
			}
		}
		if endorsements == nil {
			endorsements = []string{}
		}
		licenseState, _ := usstate.Name(home.state)
		licenseClass := pick(classes)
		dob := time.Date(1960+r.IntN(45), time.Month(1+r.IntN(12)), 1+r.IntN(28), 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
		a := store.Application{
			AccountID: accountID,
			Sent:      sent,
			Profile: store.DriverProfile{
				DriverBasics: store.DriverBasics{
					Email:      fmt.Sprintf("%s.%s.%s%d@example.com", strings.ToLower(first), strings.ToLower(last), emailTag, i),
					FirstName:  first,
					LastName:   last,
					Address:    fmt.Sprintf("%d %s", 100+r.IntN(9800), pick(streets)),
					City:       home.city,
					State:      home.state,
					Zip:        home.zip,
					Phone:      fmt.Sprintf("%d555%04d", 201+r.IntN(700), r.IntN(10000)),
					DriverType: pick(driverTypes),
					Experience: pick(experiences),
				},
				Endorsements: endorsements,
				LicenseState: &licenseState,
				LicenseClass: &licenseClass,
				DateOfBirth:  &dob,
			},
		}
		if len(jobRefs) > 0 && r.IntN(10) < 4 {
			a.JobApps = []store.JobApplicationInput{{Reference: pick(jobRefs), IsDirectApp: r.IntN(2) == 0,
				CreatedAt: sent.Add(time.Duration(r.IntN(3600)) * time.Second)}}
		}
		apps[i] = a
	}
	return apps
}

// StatusOf is the lead status an employer gave one synthetic applicant,
// who is named by the e-mail of the application.
type StatusOf struct {
	Email string
	domain.StatusChange
}

// pipeline is how an employer's applicants of the last months stand, in
// hundredths: most still new or being reviewed, a few hired, more rejected.
var pipeline = []struct {
	status domain.LeadStatus
	share  int
}{
	{domain.LeadNew, 50}, {domain.LeadReviewing, 15}, {domain.LeadContacted, 10}, {domain.LeadInterviewing, 6},
	{domain.LeadOffered, 2}, {domain.LeadHired, 3}, {domain.LeadRejected, 12}, {domain.LeadWithdrawn, 2},
}

// Pipeline gives the applications the statuses of an employer's pipeline
// (pipeline's shares), each changed within two weeks after it was sent and
// never after now, a rejection with a reason. Applicants left new are not
// listed: that is the status their application gave them.
func Pipeline(apps []store.Application, seed uint64, now time.Time) []StatusOf {
	r := rand.New(rand.NewPCG(seed, 0x7374617475736573))
	reasons := domain.RejectionReasons()
	var out []StatusOf
	for _, a := range apps {
		roll, status := r.IntN(100), domain.LeadNew
		for _, p := range pipeline {
			if roll < p.share {
				status = p.status
				break
			}
			roll -= p.share
		}
		if status == domain.LeadNew {
			continue
		}
		at := a.Sent.Add(time.Duration(r.Int64N(int64(14 * 24 * time.Hour))))
		if at.After(now) {
			at = now
		}
		c := domain.StatusChange{Status: status, ChangedAt: at.UTC().Truncate(time.Microsecond)}
		if status == domain.LeadRejected {
			c.Reason = reasons[r.IntN(len(reasons))]
		}
		out = append(out, StatusOf{Email: a.Profile.Email, StatusChange: c})
	}
	return out
}
