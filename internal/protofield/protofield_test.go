package protofield_test

import (
	"strings"
	"testing"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/protofield"
)

// TestFind: a place reaches its own member, enums are read as int32, and
// a wrong name or layout is refused when the table is built.
func TestFind(t *testing.T) {
	city := protofield.MustFind[restv2.JobInput, *string]("city")
	routes := protofield.MustFind[restv2.JobInput, []string]("routeType")
	in := &restv2.JobInput{City: new("Dallas"), RouteType: []string{"OTR"}}
	if got := *city.In(in); got == nil || *got != "Dallas" {
		t.Errorf("city = %v", got)
	}
	*routes.In(in) = append(*routes.In(in), "LTL")
	if len(in.RouteType) != 2 {
		t.Errorf("routeType = %q", in.RouteType)
	}
	driver := protofield.MustFind[jobboardv2.JobInput, int32]("driverType")
	n := &jobboardv2.JobInput{DriverType: jobboardv2.DriverType(2)}
	if got := *driver.In(n); got != 2 {
		t.Errorf("driverType = %d", got)
	}
	cents := protofield.MustFind[jobboardv2.JobInput, *int64]("payAmountMinCents")
	*cents.In(n) = new(int64(1850))
	if n.GetPayAmountMinCents() != 1850 {
		t.Errorf("payAmountMinCents = %d", n.GetPayAmountMinCents())
	}
	for _, c := range []struct {
		find func() error
		want string
	}{
		{func() error { _, err := protofield.Find[restv2.JobInput, *string]("cty"); return err }, `has no field "cty"`},
		{func() error { _, err := protofield.Find[restv2.JobInput, string]("city"); return err }, "not read as a string"},
		{func() error { _, err := protofield.Find[jobboardv2.JobInput, int64]("driverType"); return err }, "not read as a int64"},
	} {
		if err := c.find(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error with %q", err, c.want)
		}
	}
}
