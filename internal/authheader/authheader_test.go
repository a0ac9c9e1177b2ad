package authheader

import (
	"encoding/base64"
	"testing"
)

func basic(userPass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(userPass))
}

func TestKeyAndBearer(t *testing.T) {
	tests := []struct {
		name  string
		value string
		// wantKey is Key's answer, wantBearer Bearer's; "" means not ok.
		wantKey, wantBearer string
	}{
		{name: "basic user name, empty password", value: basic("jb_live_abc:"), wantKey: "jb_live_abc"},
		{name: "basic user name trimmed, password ignored", value: basic(" jb_live_abc :pw"), wantKey: "jb_live_abc"},
		{name: "basic scheme in any case", value: "bAsIc " + base64.StdEncoding.EncodeToString([]byte("k:")), wantKey: "k"},
		{name: "basic without a colon", value: basic("jb_live_abc")},
		{name: "basic with an empty user", value: basic(":jb_live_abc")},
		{name: "basic not base64", value: "Basic !!!"},
		{name: "bearer", value: "Bearer jb_live_abc", wantKey: "jb_live_abc", wantBearer: "jb_live_abc"},
		{name: "bearer in any case, spaces around", value: "  bearer   jb_live_abc  ", wantKey: "jb_live_abc", wantBearer: "jb_live_abc"},
		{name: "bearer without a token", value: "Bearer   "},
		{name: "a bare key", value: "jb_live_abc"},
		{name: "another scheme", value: "Digest username=x"},
		{name: "empty", value: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, ok := Key(tt.value)
			if ok != (tt.wantKey != "") || key != tt.wantKey {
				t.Errorf("Key(%q) = %q, %v; want %q", tt.value, key, ok, tt.wantKey)
			}
			token, ok := Bearer(tt.value)
			if ok != (tt.wantBearer != "") || token != tt.wantBearer {
				t.Errorf("Bearer(%q) = %q, %v; want %q", tt.value, token, ok, tt.wantBearer)
			}
		})
	}
}
