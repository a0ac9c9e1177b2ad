package metrics

import (
	"net"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func gaugeValue(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}

// TestCountGRPCConnections: a plain TCP connection counts as opened and
// open from the first bytes its client sends until it is closed, once
// however often it is closed; one closed before sending anything (a port
// probe) never counts.
func TestCountGRPCConnections(t *testing.T) {
	for _, c := range []struct {
		name               string
		send               bool
		closes             int
		wantOpenWhileUp    float64
		wantOpened, wantUp float64
	}{
		{name: "client sends, closed once", send: true, closes: 1, wantOpenWhileUp: 1, wantOpened: 1},
		{name: "client sends, closed twice", send: true, closes: 2, wantOpenWhileUp: 1, wantOpened: 1},
		{name: "probe that sends nothing", send: false, closes: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := New()
			creds, err := m.CountGRPCConnections(nil)
			if err != nil {
				t.Fatal(err)
			}
			counting := creds.(*countingCredentials)
			server, client := net.Pipe()
			defer client.Close()
			conn, _, err := creds.ServerHandshake(server)
			if err != nil {
				t.Fatal(err)
			}
			if c.send {
				go func() { _, _ = client.Write([]byte("PRI")) }()
				if _, err := conn.Read(make([]byte, 3)); err != nil {
					t.Fatal(err)
				}
			}
			if got := gaugeValue(t, counting.open); got != c.wantOpenWhileUp {
				t.Errorf("open before closing: %v, want %v", got, c.wantOpenWhileUp)
			}
			for range c.closes {
				_ = conn.Close()
			}
			if got := value(t, counting.opened); got != c.wantOpened {
				t.Errorf("opened: %v, want %v", got, c.wantOpened)
			}
			if got := gaugeValue(t, counting.open); got != c.wantUp {
				t.Errorf("open after closing: %v, want %v", got, c.wantUp)
			}
		})
	}
}
