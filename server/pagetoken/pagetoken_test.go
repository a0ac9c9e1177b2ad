package pagetoken

import (
	"encoding/base64"
	"errors"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	s := New([]byte("key"))
	for _, pos := range []int64{0, 1, 99, 1 << 40, -3} {
		token := s.EncodeID(7, "jobs", pos)
		got, err := s.DecodeID(token, 7, "jobs")
		if err != nil || got != pos {
			t.Errorf("position %d: decoded %d, %v", pos, got, err)
		}
	}
}

func TestRefused(t *testing.T) {
	s := New([]byte("key"))
	token := s.EncodeID(7, "drivers|state=MO", 200)
	raw, _ := base64.RawURLEncoding.DecodeString(token)
	altered := append([]byte{}, raw...)
	altered[1] ^= 0x02 // another position, same signature
	cases := []struct {
		name, token, scope string
		account            int64
		key                string
	}{
		{"other account", token, "drivers|state=MO", 8, "key"},
		{"other filters", token, "drivers|state=TX", 7, "key"},
		{"other key", token, "drivers|state=MO", 7, "other"},
		{"altered position", base64.RawURLEncoding.EncodeToString(altered), "drivers|state=MO", 7, "key"},
		{"truncated", token[:len(token)-2], "drivers|state=MO", 7, "key"},
		{"not base64", "abc!", "drivers|state=MO", 7, "key"},
		{"an old plain id", "12345", "drivers|state=MO", 7, "key"},
		{"empty", "", "drivers|state=MO", 7, "key"},
	}
	for _, c := range cases {
		if _, err := New([]byte(c.key)).DecodeID(c.token, c.account, c.scope); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", c.name, err)
		}
	}
	if _, err := s.DecodeID(token, 7, "drivers|state=MO"); err != nil {
		t.Fatalf("the untouched token: %v", err)
	}
}

func TestBytesRoundTrip(t *testing.T) {
	s := New([]byte("key"))
	for _, position := range [][]byte{nil, []byte(`{"k":["smith"],"id":4}`)} {
		got, err := s.Decode(s.Encode(1, "drivers", position), 1, "drivers")
		if err != nil || string(got) != string(position) {
			t.Errorf("%q: decoded %q, %v", position, got, err)
		}
	}
}
