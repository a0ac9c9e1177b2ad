// Package protofield finds the members of protoc-gen-go's message structs
// by their fields' JSON names, for the adapters that move a job between
// its forms by its fields' names rather than one member at a time.
//
// A place is found once, when a table is built, and checked against the
// type it is read as; reaching it afterwards is an addition to a pointer,
// as the protobuf runtime's own fast paths do, so a table walk costs what
// the hand-written copy it replaces did.
package protofield

import (
	"fmt"
	"reflect"
	"strings"
	"unsafe"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Place is where a field lies in a message of Go type M, read as a T.
type Place[M, T any] struct {
	offset uintptr
	// Desc is the field's descriptor.
	Desc protoreflect.FieldDescriptor
}

// In is the field's member in m.
func (p Place[M, T]) In(m *M) *T { return (*T)(unsafe.Add(unsafe.Pointer(m), p.offset)) }

// Find returns the place of M's field of that JSON name, read as a T: T
// must have the member's layout (an enum is read as int32, a list of
// enums as []int32). M is a message struct of protoc-gen-go.
func Find[M, T any](jsonName string) (Place[M, T], error) {
	desc := any(new(M)).(proto.Message).ProtoReflect().Descriptor()
	fd := desc.Fields().ByJSONName(jsonName)
	if fd == nil {
		return Place[M, T]{}, fmt.Errorf("%s has no field %q", desc.FullName(), jsonName)
	}
	st := reflect.TypeFor[M]()
	for i := range st.NumField() {
		sf := st.Field(i)
		if tagName(sf.Tag.Get("protobuf")) != string(fd.Name()) {
			continue
		}
		if want := reflect.TypeFor[T](); !sameLayout(sf.Type, want) {
			return Place[M, T]{}, fmt.Errorf("%s.%s is a %s, not read as a %s", desc.FullName(), fd.Name(), sf.Type, want)
		}
		return Place[M, T]{offset: sf.Offset, Desc: fd}, nil
	}
	return Place[M, T]{}, fmt.Errorf("%s.%s has no member in %s", desc.FullName(), fd.Name(), st)
}

// MustFind is Find for tables built when the program starts.
func MustFind[M, T any](jsonName string) Place[M, T] {
	p, err := Find[M, T](jsonName)
	if err != nil {
		panic("protofield: " + err.Error())
	}
	return p
}

// tagName is the name= of a protobuf struct tag.
func tagName(tag string) string {
	for part := range strings.SplitSeq(tag, ",") {
		if name, ok := strings.CutPrefix(part, "name="); ok {
			return name
		}
	}
	return ""
}

// sameLayout reports whether a member of type have may be read as want:
// the same type, or the same kinds all the way down (an enum and int32).
func sameLayout(have, want reflect.Type) bool {
	if have == want {
		return true
	}
	if have.Kind() != want.Kind() {
		return false
	}
	switch have.Kind() {
	case reflect.Pointer, reflect.Slice:
		return sameLayout(have.Elem(), want.Elem())
	case reflect.Int32, reflect.Int64, reflect.Bool, reflect.String:
		return true
	}
	return false
}
