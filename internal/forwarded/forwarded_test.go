package forwarded

import "testing"

func TestTrusts(t *testing.T) {
	p, err := Parse(" 10.0.0.0/8, 127.0.0.1 ,::1")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		addr string
		want bool
	}{
		{"10.1.2.3:5555", true},
		{"127.0.0.1:80", true},
		{"[::ffff:127.0.0.1]:80", true},
		{"[::1]:9090", true},
		{"127.0.0.2:80", false},
		{"192.168.0.1:80", false},
		{"not an address", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := p.Trusts(tt.addr); got != tt.want {
			t.Errorf("Trusts(%q) = %v, want %v", tt.addr, got, tt.want)
		}
	}
	if (Proxies{}).Trusts("127.0.0.1:80") {
		t.Error("the zero value trusts a peer")
	}
}

func TestParseRefuses(t *testing.T) {
	for _, list := range []string{"localhost", "10.0.0.0/33", "1.2.3"} {
		if _, err := Parse(list); err == nil {
			t.Errorf("Parse(%q) accepted", list)
		}
	}
}

func TestHostAndProto(t *testing.T) {
	hosts := []struct{ header, want string }{
		{"jobs.example.com", "jobs.example.com"},
		{"jobs.example.com:8443, proxy.internal", "jobs.example.com:8443"},
		{"[2001:db8::1]:443", "[2001:db8::1]:443"},
		{"evil.example/path", ""},
		{"user@evil.example", ""},
		{"a b", ""},
		{"", ""},
	}
	for _, tt := range hosts {
		if got := Host(tt.header); got != tt.want {
			t.Errorf("Host(%q) = %q, want %q", tt.header, got, tt.want)
		}
	}
	protos := []struct{ header, want string }{{"https", "https"}, {"HTTP, https", "http"}, {"ftp", ""}, {"", ""}}
	for _, tt := range protos {
		if got := Proto(tt.header); got != tt.want {
			t.Errorf("Proto(%q) = %q, want %q", tt.header, got, tt.want)
		}
	}
}

func TestClient(t *testing.T) {
	p, err := Parse("10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, peer, xff, want string }{
		{"no proxy", "203.0.113.9:5000", "", "203.0.113.9:5000"},
		{"untrusted peer's header ignored", "203.0.113.9:5000", "198.51.100.1", "203.0.113.9:5000"},
		{"one proxy", "10.0.0.2:5000", "198.51.100.1", "198.51.100.1"},
		{"client-written hops skipped", "10.0.0.2:5000", "1.1.1.1, 198.51.100.1", "198.51.100.1"},
		{"two proxies", "10.0.0.2:5000", "198.51.100.1, 10.0.0.3", "198.51.100.1"},
		{"only proxies", "10.0.0.2:5000", "10.0.0.3", "10.0.0.2:5000"},
		{"garbage", "10.0.0.2:5000", "198.51.100.1, nonsense", "10.0.0.2:5000"},
	}
	for _, tt := range tests {
		if got := p.Client(tt.peer, tt.xff); got != tt.want {
			t.Errorf("%s: Client(%q, %q) = %q, want %q", tt.name, tt.peer, tt.xff, got, tt.want)
		}
	}
}
