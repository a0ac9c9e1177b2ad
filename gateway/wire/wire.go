// Package wire writes the service's documents in JSON or XML from one
// sequence of calls, so each resource's field mapping is written once and
// both representations follow it: names, order, nulls, booleans and CDATA.
//
// The two formats differ where docs/api.md says they do: a null is JSON
// null and an empty XML element; false is JSON false and an empty element,
// true is 1 in XML; rich text is a CDATA section in XML; a list is a JSON
// array and an XML element whose children repeat one item name.
package wire

import "io"

// Writer writes one document. Names are object keys in JSON (ignored at the
// root and for list items) and element names in XML.
type Writer interface {
	// BeginObject opens an object.
	BeginObject(name string)
	EndObject()
	// BeginList opens a list; its items are written with the item's name.
	BeginList(name string)
	EndList()
	// BeginXMLOnly opens an element that exists only in XML, such as the
	// jobs root around a single retrieved job.
	BeginXMLOnly(name string)
	EndXMLOnly()

	String(name, v string)
	// NullableString writes v, or a null when v is nil.
	NullableString(name string, v *string)
	// RichText writes HTML-bearing text: a CDATA section in XML.
	RichText(name string, v *string)
	Int(name string, v int64)
	// NullableInt writes v, or a null when v is nil.
	NullableInt(name string, v *int64)
	Bool(name string, v bool)
	// JSONValue writes v, a JSON value written earlier by this package,
	// as it is: an event's object, kept as the text of its time. Only the
	// JSON-only routes (events and webhooks) have such values; XML writes
	// the text, escaped, so nothing is ever lost.
	JSONValue(name string, v []byte)

	// Bytes returns the finished document.
	Bytes() []byte

	// Buffered is how many bytes are written and not yet flushed.
	Buffered() int
	// Flush writes what is buffered to out and empties the buffer, so a
	// long list is sent while it is written and never held whole. Call it
	// between the items of a list: an XML list flushed before its first
	// item can no longer be closed as an empty element.
	Flush(out io.Writer) error
}

// Format is a representation of the API.
type Format int

// The two representations.
const (
	JSON Format = iota
	XML
)

// New returns a Writer for f with room for about size bytes.
func New(f Format, size int) Writer {
	if f == XML {
		return newXMLWriter(size)
	}
	return newJSONWriter(size)
}

// String names the format as the path suffix does.
func (f Format) String() string {
	if f == XML {
		return "xml"
	}
	return "json"
}
