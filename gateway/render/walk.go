package render

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/truckjobs/jobboard/gateway/wire"
)

// walk writes msg as its message says, for the answers whose shape is
// their message's (the webhooks' and their deliveries', and any new
// resource's) rather than one the v2.0 API fixed before: an object named
// name, each field in the order the message declares it, under its JSON
// name.
//
//   - A text, an integer or a boolean is its value; an optional one that
//     is unset is null.
//   - A bytes field is a JSON value this package wrote earlier (an event's
//     data), written as it is.
//   - A message is an object; an unset one is null.
//   - A list is an array of its items; in XML each item is an element
//     named as its field in the singular, a message's as its type.
//
// A field of another kind (an enum, a float, a map) has no text form in
// the REST API: walk reports it rather than guess one.
func walk(w wire.Writer, name string, msg protoreflect.Message) error {
	w.BeginObject(name)
	fields := msg.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		var err error
		switch {
		case fd.IsMap():
			err = unwritable(fd)
		case fd.IsList():
			err = walkList(w, fd, msg.Get(fd).List())
		case fd.HasPresence() && !msg.Has(fd):
			w.NullableString(fd.JSONName(), nil)
		default:
			err = walkValue(w, fd.JSONName(), fd, msg.Get(fd))
		}
		if err != nil {
			return err
		}
	}
	w.EndObject()
	return nil
}

func walkList(w wire.Writer, fd protoreflect.FieldDescriptor, list protoreflect.List) error {
	item := strings.TrimSuffix(fd.JSONName(), "s")
	if fd.Message() != nil {
		item = lowerFirst(string(fd.Message().Name()))
	}
	w.BeginList(fd.JSONName())
	for i := range list.Len() {
		if err := walkValue(w, item, fd, list.Get(i)); err != nil {
			return err
		}
	}
	w.EndList()
	return nil
}

// walkValue writes one value of field fd under name.
func walkValue(w wire.Writer, name string, fd protoreflect.FieldDescriptor, v protoreflect.Value) error {
	switch fd.Kind() {
	case protoreflect.StringKind:
		w.String(name, v.String())
	case protoreflect.BoolKind:
		w.Bool(name, v.Bool())
	case protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Sint32Kind, protoreflect.Sint64Kind,
		protoreflect.Sfixed32Kind, protoreflect.Sfixed64Kind:
		w.Int(name, v.Int())
	case protoreflect.BytesKind:
		w.JSONValue(name, v.Bytes())
	case protoreflect.MessageKind:
		return walk(w, name, v.Message())
	default:
		return unwritable(fd)
	}
	return nil
}

func unwritable(fd protoreflect.FieldDescriptor) error {
	return fmt.Errorf("no REST representation for %s, a %s", fd.FullName(), fd.Kind())
}

// walked writes msg whole, named in XML as its message without
// "Response" (a ListWebhooksResponse is <listWebhooks>).
func walked(f wire.Format, msg proto.Message) ([]byte, error) {
	w := wire.New(f, 512)
	m := msg.ProtoReflect()
	if err := walk(w, lowerFirst(strings.TrimSuffix(string(m.Descriptor().Name()), "Response")), m); err != nil {
		return nil, err
	}
	return w.Bytes(), nil
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
