package decode

import (
	"google.golang.org/protobuf/reflect/protoreflect"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/protofield"
)

// jobField is one job input field the request message has a place for:
// a single value (scalar) or a repeated one (list).
type jobField struct {
	name   string
	scalar func(*restv2.JobInput) **string
	list   func(*restv2.JobInput) *[]string
	// bit is the field's own bit in a set of fields (fieldSet).
	bit fieldSet
}

// fieldSet is a set of job fields, one bit each: the fields a job has
// named so far, checked once a member without a map or an allocation.
type fieldSet uint32

// jobFields maps each job input field's wire name to its place in the
// request message; both decoders use it, one lookup a member. Every text
// field of jobboard.rest.v2.JobInput is one: a new field there is decoded
// with no change here.
var jobFields = fieldsByName(restv2.File_jobboard_rest_v2_jobs_proto.Messages().ByName("JobInput").Fields())

func fieldsByName(fields protoreflect.FieldDescriptors) map[string]*jobField {
	m := make(map[string]*jobField, fields.Len())
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Kind() != protoreflect.StringKind {
			continue // extra_fields and repeated_fields, which the decoders fill
		}
		f := &jobField{name: fd.JSONName(), bit: 1 << len(m)}
		if fd.IsList() {
			place := protofield.MustFind[restv2.JobInput, []string](f.name)
			f.list = place.In
		} else {
			place := protofield.MustFind[restv2.JobInput, *string](f.name)
			f.scalar = place.In
		}
		m[f.name] = f
	}
	if len(m) > 32 {
		panic("fieldSet holds 32 fields")
	}
	return m
}

// set stores one decoded value of field f (nil for an unknown name, kept
// as an extra field under name, which the service reports as ignored). A
// null item of a list is dropped.
func (f *jobField) set(j *restv2.JobInput, name string, value *string) {
	switch {
	case f == nil:
		j.ExtraFields = append(j.ExtraFields, &restv2.ExtraField{Name: name, Value: value})
	case f.scalar != nil:
		*f.scalar(j) = value
	case value != nil:
		*f.list(j) = append(*f.list(j), *value)
	}
}

// namedMembers tracks the members one job has named, so that a member named
// twice is told (docs/api.md, Limits against abuse): the known fields in a
// bit set, the rare unknown names in a map made on the first of them.
type namedMembers struct {
	known    fieldSet
	unknown  map[string]struct{}
	repeated []*restv2.ExtraField
	// repeatedNames holds the names in repeated, once there are many.
	repeatedNames map[string]struct{}
}

// reset forgets the members of the last job.
func (n *namedMembers) reset() {
	n.known, n.repeated, n.repeatedNames = 0, nil, nil
	if len(n.unknown) > 0 {
		clear(n.unknown)
	}
}

// again notes a member of field f (nil for an unknown name) and reports
// whether the job named it before.
func (n *namedMembers) again(f *jobField, name string) bool {
	if f != nil {
		again := n.known&f.bit != 0
		n.known |= f.bit
		return again
	}
	if _, ok := n.unknown[name]; ok {
		return true
	}
	if n.unknown == nil {
		n.unknown = map[string]struct{}{}
	}
	n.unknown[name] = struct{}{}
	return false
}

// repeat records a member named again with the value it was given, once
// for each name: the job gets one entry for it however often it repeats.
func (n *namedMembers) repeat(name string, value *string) {
	if n.repeatedNames != nil {
		if _, ok := n.repeatedNames[name]; ok {
			return
		}
		n.repeatedNames[name] = struct{}{}
	} else {
		for _, r := range n.repeated {
			if r.Name == name {
				return
			}
		}
		if len(n.repeated) == 16 {
			n.repeatedNames = map[string]struct{}{name: {}}
			for _, r := range n.repeated {
				n.repeatedNames[r.Name] = struct{}{}
			}
		}
	}
	n.repeated = append(n.repeated, &restv2.ExtraField{Name: name, Value: value})
}
