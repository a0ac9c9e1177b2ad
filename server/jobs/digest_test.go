package jobs

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
)

// TestInputDigest: a job's digest changes with any value of any field,
// with a value present or not, and with where one list value ends; a job
// with unknown or repeated members has none; two builds digest the same
// job apart.
func TestInputDigest(t *testing.T) {
	base := &restv2.JobInput{}
	for f, place := range textPlaces {
		if fields[f].Kind == domain.WordsField {
			*place.list.In(base) = []string{"a", "b"}
		} else {
			*place.scalar.In(base) = new("value")
		}
	}
	build := []byte("build 1")
	// What is hashed: equal digests are equal inputs to hash.
	digest := func(in *restv2.JobInput) []byte { return appendInput(append([]byte(nil), build...), in) }
	first := digest(base)
	seen := map[string]string{string(first): "the job"}
	differs := func(what string, in *restv2.JobInput) {
		t.Helper()
		d := digest(in)
		if d == nil {
			t.Errorf("%s: no digest", what)
			return
		}
		if other, ok := seen[string(d)]; ok {
			t.Errorf("%s: digested as %s", what, other)
		}
		seen[string(d)] = what
	}
	for f, place := range textPlaces {
		name := fields[f].Name
		in := proto.Clone(base).(*restv2.JobInput)
		if fields[f].Kind == domain.WordsField {
			*place.list.In(in) = []string{"ab"}
			differs(name+" joined", in)
			*place.list.In(in) = []string{"a", "b", ""}
			differs(name+" with an empty value more", in)
			*place.list.In(in) = nil
			differs(name+" empty", in)
			continue
		}
		*place.scalar.In(in) = new("valuf")
		differs(name+" changed", in)
		*place.scalar.In(in) = new("")
		differs(name+" empty", in)
		*place.scalar.In(in) = nil
		differs(name+" absent", in)
	}
	for _, in := range []*restv2.JobInput{
		{ExtraFields: []*restv2.ExtraField{{Name: "bonus", Value: new("5")}}},
		{RepeatedFields: []*restv2.ExtraField{{Name: "title", Value: new("T")}}},
	} {
		if d := digest(in); d != nil {
			t.Errorf("a job with members outside its fields (%v) has a digest", in)
		}
	}
	build = []byte("build 2")
	if bytes.Equal(digest(base), first) {
		t.Error("two builds digest a job alike")
	}
}
