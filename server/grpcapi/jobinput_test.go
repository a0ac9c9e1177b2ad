package grpcapi

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/truckjobs/jobboard/domain"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/jobs"
)

// TestJobInputReadsNaturalTypes: a natural job reaches the rules in the
// domain's types with nothing parsed, and what it sent is shown in the
// gRPC API's own form: cents as cents, an enum number as its digits.
func TestJobInputReadsNaturalTypes(t *testing.T) {
	tests := []struct {
		name   string
		in     *jobboardv2.JobInput
		check  func(r jobs.Input) bool
		unread []jobs.Unread
	}{
		{"words and cents", &jobboardv2.JobInput{DriverType: jobboardv2.DriverType_DRIVER_TYPE_STUDENT,
			Preference: jobboardv2.Preference_PREFERENCE_TEAM, PayAmountMinCents: new(int64(1805)),
			EmploymentType: []jobboardv2.EmploymentType{jobboardv2.EmploymentType_EMPLOYMENT_TYPE_PART_TIME, 0}},
			func(r jobs.Input) bool {
				return *r.DriverType == "Student" && *r.Preference == "Team" && *r.PayMin == 1805 &&
					*r.Sent[jobs.FieldNamed("payAmountMin")] == "1805" && cmp.Equal(r.EmploymentType, []domain.EmploymentType{"Part-Time"})
			}, nil},
		{"unspecified is not sent", &jobboardv2.JobInput{},
			func(r jobs.Input) bool {
				return r.DriverType == nil && r.PayMin == nil && r.Sent[jobs.FieldNamed("driverType")] == nil && *r.Sent[jobs.FieldNamed("twicOnly")] == "false"
			}, nil},
		{"an unknown enum number", &jobboardv2.JobInput{FreightType: 99},
			func(r jobs.Input) bool { return r.FreightType == nil },
			[]jobs.Unread{{Field: jobs.FieldNamed("freightType"), Value: new("99"),
				Message: `freightType: "99" is not one of Box, Car Hauler, Drop and Hook, Dry Bulk, Dry Van, Flatbed, Hopper Bottom, Intermodal, Oil Field, Oversize Load, Refrigerated, Tanker, Yard Spotter`}}},
		{"unknown numbers in a list", &jobboardv2.JobInput{RouteType: []jobboardv2.RouteType{7, jobboardv2.RouteType_ROUTE_TYPE_OTR, 8}},
			func(r jobs.Input) bool { return r.RouteType == nil },
			[]jobs.Unread{{Field: jobs.FieldNamed("routeType"), Value: new("7"),
				Message: `routeType: "7" is not one of Dedicated, Local, LTL, OTR, Regional (nor are 1 more of the values sent)`}}},
		{"eleven values", &jobboardv2.JobInput{RouteType: make([]jobboardv2.RouteType, 11)},
			func(r jobs.Input) bool { return r.RouteType == nil },
			[]jobs.Unread{{Field: jobs.FieldNamed("routeType"), Value: new("0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0"),
				Message: "routeType: 11 values were sent; at most 10 are accepted"}}},
		{"a million values: the echo is cut", &jobboardv2.JobInput{EmploymentType: make([]jobboardv2.EmploymentType, 1_000_000)},
			func(r jobs.Input) bool { return r.EmploymentType == nil },
			[]jobs.Unread{{Field: jobs.FieldNamed("employmentType"), Value: new(call.Truncate(strings.Repeat("0, ", 400), call.MaxEchoed)),
				Message: "employmentType: 1000000 values were sent; at most 10 are accepted"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := jobInput(tt.in)
			if !tt.check(r) {
				t.Errorf("read %+v", r.JobInput)
			}
			if diff := cmp.Diff(tt.unread, r.Unread); diff != "" {
				t.Errorf("unread (-want +got):\n%s", diff)
			}
		})
	}
}
