package render_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/truckjobs/jobboard/gateway/render"
	"github.com/truckjobs/jobboard/gateway/wire"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
)

// TestJobWrittenInOneBuffer: a retrieved job, every field set, short texts
// or long, is written into the buffer its writer started with, in either
// format: two allocations, the writer and the buffer. A buffer too small
// regrows as it is written, an allocation and a copy more each time, on
// the service's most frequent read.
func TestJobWrittenInOneBuffer(t *testing.T) {
	full := func(description string) *restv2.Job {
		return &restv2.Job{Id: 1234567, Date: "2026-12-07", ReferenceNumber: "DEMO-1001-REGIONAL",
			Title: "OTR Company Driver - Dry Van, Home Every Weekend", City: proto.String("Oklahoma City"), State: "OK",
			PostalCode: proto.String("73102"), DriverType: "Owner Operator", Preference: proto.String("Team"),
			FreightType: "Refrigerated", PayAmountMin: proto.String("1250.00"), PayAmountMax: proto.String("1850.00"),
			PayFrequency: proto.String("Per Week"), EmploymentType: []string{"Full-Time"}, RouteType: []string{"Regional"},
			Description: description, Requirements: proto.String("<ul><li>Class A CDL</li><li>2 years of experience</li></ul>"),
			TwicOnly: true, LicenseClass: proto.String("A")}
	}
	for _, c := range []struct {
		name string
		job  *restv2.Job
	}{
		{"short texts", full("<p>Home <b>every weekend</b>.</p>")},
		{"a long description", full("<p>" + strings.Repeat("Late-model Freightliners, no touch freight. ", 200) + "</p>")},
	} {
		for _, f := range []wire.Format{wire.JSON, wire.XML} {
			if n := testing.AllocsPerRun(50, func() { _, _ = render.Message(f, c.job) }); n > 2 {
				t.Errorf("%s in %s: %.0f allocations, want 2 (the writer and its buffer)", c.name, f, n)
			}
		}
	}
}
