package render

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/truckjobs/jobboard/domain"
	"github.com/truckjobs/jobboard/gateway/wire"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/protofield"
)

// Job writes one job: every field of jobboard.rest.v2.Job in the order
// the message declares them, so a new field is written with no change
// here. An optional field is null when not given; a list shows only its
// first value, as the API's list and retrieve responses always have; the
// job's HTML fields (domain.HTMLField) are rich text, which XML wraps.
func Job(w wire.Writer, j *restv2.Job) {
	w.BeginObject("job")
	for _, write := range jobWriters {
		write(w, j)
	}
	w.EndObject()
}

// jobWriters write each field of a job, in order.
var jobWriters = func() []func(wire.Writer, *restv2.Job) {
	fields := (&restv2.Job{}).ProtoReflect().Descriptor().Fields()
	out := make([]func(wire.Writer, *restv2.Job), fields.Len())
	for i := range out {
		out[i] = jobWriter(fields.Get(i))
	}
	return out
}()

func jobWriter(fd protoreflect.FieldDescriptor) func(wire.Writer, *restv2.Job) {
	name := fd.JSONName()
	f, _ := domain.JobFieldNamed(name)
	html := f.Kind == domain.HTMLField
	switch {
	case fd.IsList() && fd.Kind() == protoreflect.StringKind:
		p := protofield.MustFind[restv2.Job, []string](name)
		return func(w wire.Writer, j *restv2.Job) { w.NullableString(name, firstOf(*p.In(j))) }
	case fd.Kind() == protoreflect.StringKind && fd.HasPresence():
		p := protofield.MustFind[restv2.Job, *string](name)
		if html {
			return func(w wire.Writer, j *restv2.Job) { w.RichText(name, *p.In(j)) }
		}
		return func(w wire.Writer, j *restv2.Job) { w.NullableString(name, *p.In(j)) }
	case fd.Kind() == protoreflect.StringKind:
		p := protofield.MustFind[restv2.Job, string](name)
		if html {
			return func(w wire.Writer, j *restv2.Job) { w.RichText(name, p.In(j)) }
		}
		return func(w wire.Writer, j *restv2.Job) { w.String(name, *p.In(j)) }
	case fd.Kind() == protoreflect.BoolKind:
		p := protofield.MustFind[restv2.Job, bool](name)
		return func(w wire.Writer, j *restv2.Job) { w.Bool(name, *p.In(j)) }
	case fd.Kind() == protoreflect.Int64Kind:
		p := protofield.MustFind[restv2.Job, int64](name)
		return func(w wire.Writer, j *restv2.Job) { w.Int(name, *p.In(j)) }
	}
	panic(fmt.Sprintf("render: no way to write jobboard.rest.v2.Job's %s (%s)", fd.Name(), fd.Kind()))
}

func firstOf(values []string) *string {
	if len(values) == 0 {
		return nil
	}
	return &values[0]
}
