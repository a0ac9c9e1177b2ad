// Package authheader reads an API key from an Authorization value: the REST
// header or the gRPC authorization metadata, which carry the same schemes.
// It only parses; whether the key is good is the authenticator's question.
package authheader

import (
	"encoding/base64"
	"strings"
)

// Key is the key of a REST request's Authorization value: the user name of
// Basic credentials (curl -u KEY: sends the key so, with an empty
// password) or a Bearer token. ok is false when the value holds neither.
func Key(value string) (key string, ok bool) {
	if user, ok := basicUser(value); ok {
		return user, user != ""
	}
	return Bearer(value)
}

// Bearer is the token of a "Bearer <token>" value, the one scheme gRPC
// callers use. ok is false for any other value or an empty token.
func Bearer(value string) (token string, ok bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(value), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// basicUser is the trimmed user name of a "Basic <base64(user:password)>"
// value, read as net/http's Request.BasicAuth reads it.
func basicUser(value string) (string, bool) {
	scheme, encoded, ok := strings.Cut(value, " ")
	if !ok || !strings.EqualFold(scheme, "basic") {
		return "", false
	}
	decoded, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return "", false
	}
	user, _, ok := strings.Cut(string(decoded), ":")
	if !ok {
		return "", false
	}
	return strings.TrimSpace(user), true
}
