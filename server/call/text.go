package call

import (
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// CheckText refuses string fields of a request that hold a NUL or are not
// UTF-8 (a caller in-process may send such), naming the field as REST
// does: PostgreSQL would refuse them with an error of its own.
func CheckText(msg proto.Message) error {
	var bad error
	msg.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.StringKind || fd.IsList() || fd.IsMap() {
			return true
		}
		if s := v.String(); Unstorable(s) {
			bad = InvalidField(string(fd.Name()), s, "is not valid; values must be UTF-8 text without NUL characters")
			return false
		}
		return true
	})
	return bad
}

// Unstorable reports text PostgreSQL refuses: a NUL, or bytes not UTF-8.
func Unstorable(s string) bool { return strings.ContainsRune(s, 0) || !utf8.ValidString(s) }
