// Package pagetoken makes the page tokens of the paged lists (AIP-158):
// opaque to callers and signed, so a token only works for the account and
// the filters it was answered for, and cannot be altered to reach another
// position.
package pagetoken

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
)

// version is the first byte of a token, so a later format can tell its own
// tokens from these.
const version = 1

// macSize is how much of the HMAC-SHA256 a token carries: 128 bits leave no
// forgery within reach while keeping tokens short.
const macSize = 16

// ErrInvalid is a token that this key did not sign for this account and
// scope: altered, from another account, or for other filters.
var ErrInvalid = errors.New("not a next_page_token answered for this request")

// Signer signs and checks tokens with one key.
type Signer struct{ key []byte }

// New returns a signer over key, which must be the same on every replica.
func New(key []byte) Signer { return Signer{key: key} }

// Encode returns the token of position for the account and scope. Scope
// names the list and everything that decides its order and contents (the
// filters and the sort); position is where the next page starts, in a form
// the list chooses.
func (s Signer) Encode(account int64, scope string, position []byte) string {
	body := append([]byte{version}, position...)
	return base64.RawURLEncoding.EncodeToString(append(body, s.mac(account, scope, body)...))
}

// Decode returns the position token carries, or ErrInvalid when the key did
// not sign it for account and scope.
func (s Signer) Decode(token string, account int64, scope string) ([]byte, error) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) < 1+macSize || raw[0] != version {
		return nil, ErrInvalid
	}
	body, mac := raw[:len(raw)-macSize], raw[len(raw)-macSize:]
	if !hmac.Equal(mac, s.mac(account, scope, body)) {
		return nil, ErrInvalid
	}
	return body[1:], nil
}

// EncodeID is Encode of a position that is an id.
func (s Signer) EncodeID(account int64, scope string, id int64) string {
	return s.Encode(account, scope, binary.AppendVarint(nil, id))
}

// DecodeID is Decode of a position that is an id.
func (s Signer) DecodeID(token string, account int64, scope string) (int64, error) {
	position, err := s.Decode(token, account, scope)
	if err != nil {
		return 0, err
	}
	id, n := binary.Varint(position)
	if n <= 0 || n != len(position) {
		return 0, ErrInvalid
	}
	return id, nil
}

// mac signs the account, a hash of the scope and the body; the hash keeps
// the input's layout fixed whatever the scope holds.
func (s Signer) mac(account int64, scope string, body []byte) []byte {
	h := hmac.New(sha256.New, s.key)
	scopeHash := sha256.Sum256([]byte(scope))
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(account)))
	h.Write(scopeHash[:])
	h.Write(body)
	return h.Sum(nil)[:macSize]
}
