package natural

import (
	"testing"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/truckjobs/jobboard/server/descriptors"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// enumComment is the leading comment of an enum value in proto/, from the
// descriptors that reflection serves.
func enumComment(t *testing.T, v protoreflect.EnumValueDescriptor) string {
	t.Helper()
	d, err := descriptors.Resolver().FindDescriptorByName(v.FullName())
	if err != nil {
		t.Fatal(err)
	}
	return d.ParentFile().SourceLocations().ByDescriptor(d).LeadingComments
}
