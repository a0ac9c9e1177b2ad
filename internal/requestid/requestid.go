// Package requestid holds the one rule for request ids, shared by the REST
// access log and the gRPC interceptors so an id accepted or made by one is
// accepted unchanged by the other (the gateway hands it to the services as
// x-request-id metadata, and imports keep it for their callbacks).
package requestid

import (
	"crypto/rand"
	"encoding/hex"
)

// MaxLen bounds an id taken from a client: ids end up in every log line of
// a request and in a database column.
const MaxLen = 128

// Valid reports whether a client's id may be used as it is: non-empty,
// short, printable ASCII (nothing that could break a log line or a header).
func Valid(id string) bool {
	if id == "" || len(id) > MaxLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x20 || id[i] > 0x7e {
			return false
		}
	}
	return true
}

// New returns a fresh random id (24 hex digits).
func New() string {
	// Arrays rather than hex.EncodeToString: the gRPC server makes an id
	// for every call that brings none, and the string is then its one
	// allocation.
	var b [12]byte
	_, _ = rand.Read(b[:])
	var digits [2 * len(b)]byte
	hex.Encode(digits[:], b[:])
	return string(digits[:])
}

// FromClient returns the client's id when it is valid, else a new one.
func FromClient(id string) string {
	if Valid(id) {
		return id
	}
	return New()
}
