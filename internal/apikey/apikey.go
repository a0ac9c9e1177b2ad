// Package apikey holds the form of an account's API keys: how a new one is
// made, the hash it is stored and looked up by, and the prefix kept in
// clear to name it. The service, the admin commands and the tests' account
// fixture all use it, so a key made by one is recognised by the others.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"math/big"
	"strings"
)

const (
	// start begins every key.
	start = "jb_live_"
	// digits is enough base62 digits for 32 random bytes (62^43 > 2^256).
	digits = 43
	// prefixShown is how much of a key is kept in clear to name it.
	prefixShown = len(start) + 6
)

// New returns a fresh key: jb_live_ and 32 random bytes in base62.
func New() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	d := new(big.Int).SetBytes(b).Text(62)
	return start + strings.Repeat("0", digits-len(d)) + d
}

// Hash is the form a key is stored and looked up in.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	// Each authenticated call hashes its key to look it up: the digits go
	// through an array, so the string is allocated once.
	var digits [2 * sha256.Size]byte
	hex.Encode(digits[:], sum[:])
	return string(digits[:])
}

// Prefix is the part of a key kept in clear to name it.
func Prefix(key string) string {
	if len(key) < prefixShown {
		return key
	}
	return key[:prefixShown]
}

// Valid reports whether s has the form of a whole key, as New makes them,
// so that a prefix or a typo is not taken for one.
func Valid(s string) bool {
	d, ok := strings.CutPrefix(s, start)
	if !ok || len(d) != digits {
		return false
	}
	for _, r := range d {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			return false
		}
	}
	return true
}
