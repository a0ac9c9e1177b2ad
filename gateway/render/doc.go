// Package render writes the REST API's answers in their exact v2.0 shapes,
// in JSON and in XML, with one writing function per resource shared by
// both formats (through package wire). It is also how the service writes
// what it sends beyond answers: an import's callback body and an event's
// data are what GET would show.
package render
