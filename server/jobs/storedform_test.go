package jobs

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
)

// TestImportPayloadCarriesEveryField: every field of a job input, set,
// comes back from the stored form unchanged, so a field added to the
// message without a place in the store's form fails here.
func TestImportPayloadCarriesEveryField(t *testing.T) {
	in := &restv2.JobInput{}
	m := in.ProtoReflect()
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		switch {
		case fd.IsList() && fd.Kind() == protoreflect.StringKind:
			list := m.Mutable(fd).List()
			list.Append(protoreflect.ValueOfString(string(fd.Name()) + "-1"))
			list.Append(protoreflect.ValueOfString(string(fd.Name()) + "-2"))
		case fd.IsList() && fd.Message() != nil && fd.Message().FullName() == "jobboard.rest.v2.ExtraField":
			in.ExtraFields = []*restv2.ExtraField{{Name: "benefits", Value: new("Dental")}, {Name: "shift"}}
		case fd.Kind() == protoreflect.StringKind && !fd.IsList():
			m.Set(fd, protoreflect.ValueOfString(string(fd.Name())+" \x00é"))
		default:
			t.Fatalf("field %s of a kind this test does not fill", fd.Name())
		}
	}
	jobs := []*restv2.JobInput{in, {Title: new("")}, {}}
	payload, err := StoredForm(jobs)
	if err != nil {
		t.Fatal(err)
	}
	var got []*restv2.JobInput
	err = importChunks(payload, 2, func(offset int, jobs []*restv2.JobInput) error {
		if offset != len(got) {
			t.Errorf("a chunk at offset %d after %d jobs", offset, len(got))
		}
		got = append(got, jobs...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(jobs) {
		t.Fatalf("%d jobs back, want %d", len(got), len(jobs))
	}
	for i := range jobs {
		if !proto.Equal(got[i], jobs[i]) {
			t.Errorf("job %d back as %v, want %v", i, got[i], jobs[i])
		}
	}
	if n := StoredJobCount(payload); n != 3 {
		t.Errorf("counted %d jobs, want 3", n)
	}
}
