package metrics

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func value(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func TestObserveHTTPBoundsMethod(t *testing.T) {
	m := New()
	m.ObserveHTTP("unmatched", "BREW", 404, time.Millisecond)
	m.ObserveHTTP("/healthz", "GET", 200, time.Millisecond)
	if got := value(t, m.httpRequests.WithLabelValues("unmatched", "other", "404")); got != 1 {
		t.Errorf("made-up method counted under other: %v, want 1", got)
	}
	if got := value(t, m.httpRequests.WithLabelValues("/healthz", "GET", "200")); got != 1 {
		t.Errorf("GET /healthz: %v, want 1", got)
	}
}

// TestNilMetrics: services built without metrics call the same methods.
func TestNilMetrics(t *testing.T) {
	var m *Metrics
	m.ObserveHTTP("/healthz", "GET", 200, time.Millisecond)
	m.ImportFinished(ImportComplete, time.Second)
	m.CallbackAttempt(CallbackDelivered)
	m.WebhookDelivery(WebhookDelivered, time.Millisecond)
	m.WebhookEndpointDisabled(DisabledGone)
	if m.GRPC() != nil || m.Registry() != nil || m.WatchDB(nil) != nil || m.WatchQueue(nil) != nil {
		t.Error("a nil *Metrics is not a no-op")
	}
}

// TestSeveralRegistries: each server process (or test) has its own registry.
func TestSeveralRegistries(t *testing.T) {
	a, b := New(), New()
	a.CallbackAttempt(CallbackGone)
	if got := value(t, b.callbackAttempts.WithLabelValues(string(CallbackGone))); got != 0 {
		t.Errorf("a second registry sees the first's counts: %v", got)
	}
}

// TestQueueDepthCached: scrapes within QueueCacheFor reuse one read of the
// database, so an open /metrics cannot be used to load it.
func TestQueueDepthCached(t *testing.T) {
	m := New()
	reads := 0
	depth := func(context.Context) ([]QueueJobs, error) {
		reads++
		return []QueueJobs{{Kind: "job_import", State: "available", Count: int64(reads)}}, nil
	}
	if err := m.WatchQueue(depth, "job_import"); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := m.registry.Gather(); err != nil {
			t.Fatal(err)
		}
	}
	if reads != 1 {
		t.Errorf("5 scrapes read the queue %d times, want 1", reads)
	}
}

// TestQueueDepthKeptThroughOutage: a read of the queue that fails leaves
// the last values read, with their oldest ages, and the time of that read,
// rather than dropping the series from the scrape; before any read
// succeeds there is no value to give.
func TestQueueDepthKeptThroughOutage(t *testing.T) {
	m := New()
	m.QueueCacheFor = 0
	var fail bool
	depth := func(context.Context) ([]QueueJobs, error) {
		if fail {
			return nil, errors.New("database unreachable")
		}
		return []QueueJobs{{Kind: "job_import", State: "running", Count: 1, Oldest: 90 * time.Second}}, nil
	}
	if err := m.WatchQueue(depth, "job_import"); err != nil {
		t.Fatal(err)
	}
	fail = true
	if _, err := m.registry.Gather(); err == nil {
		t.Error("a scrape before any read succeeded gave queue values")
	}
	fail = false
	before := gatherQueue(t, m)
	fail = true
	during := gatherQueue(t, m)
	for _, got := range []map[string]float64{before, during} {
		for name, want := range map[string]float64{
			"jobboard_queue_jobs running":                   1,
			"jobboard_queue_oldest_job_age_seconds running": 90,
			"jobboard_queue_jobs available":                 0,
		} {
			if got[name] != want {
				t.Errorf("%s: %v, want %v", name, got[name], want)
			}
		}
	}
	if stamp := during["jobboard_queue_read_timestamp_seconds"]; stamp == 0 || stamp != before["jobboard_queue_read_timestamp_seconds"] {
		t.Errorf("read time during the outage %v, want that of the last read %v", stamp, before["jobboard_queue_read_timestamp_seconds"])
	}
}

// gatherQueue scrapes m and returns the queue's gauges by name and state.
func gatherQueue(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	families, err := m.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "jobboard_queue_") {
			continue
		}
		for _, s := range f.GetMetric() {
			key := f.GetName()
			for _, l := range s.GetLabel() {
				if l.GetName() == "state" {
					key += " " + l.GetValue()
				}
			}
			out[key] = s.GetGauge().GetValue()
		}
	}
	return out
}

// TestWebhookDelivery: a dropped delivery counts, but sent nothing to time.
func TestWebhookDelivery(t *testing.T) {
	m := New()
	m.WebhookDelivery(WebhookDelivered, 30*time.Millisecond)
	m.WebhookDelivery(WebhookDropped, time.Hour)
	m.WebhookEndpointDisabled(DisabledFailing)
	if got := value(t, m.webhookAttempts.WithLabelValues(string(WebhookDropped))); got != 1 {
		t.Errorf("dropped: %v, want 1", got)
	}
	if got := value(t, m.webhooksDisabled.WithLabelValues(DisabledFailing)); got != 1 {
		t.Errorf("disabled failing: %v, want 1", got)
	}
	var h dto.Metric
	if err := m.webhookDuration.Write(&h); err != nil {
		t.Fatal(err)
	}
	if n, sum := h.GetHistogram().GetSampleCount(), h.GetHistogram().GetSampleSum(); n != 1 || sum > 1 {
		t.Errorf("latency: %d samples summing %vs, want the delivered one only", n, sum)
	}
}

// gatherGauges gathers m's gauges whose names keep accepts, keyed by name
// and label values.
func gatherGauges(t *testing.T, m *Metrics, keep func(name string) bool) map[string]float64 {
	t.Helper()
	families, err := m.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if !keep(f.GetName()) {
			continue
		}
		for _, s := range f.GetMetric() {
			key := f.GetName()
			for _, l := range s.GetLabel() {
				key += " " + l.GetValue()
			}
			out[key] = s.GetGauge().GetValue()
		}
	}
	return out
}

// TestPrimary: whether the database written to is a primary, and each of
// its slots' state and retained WAL by slot, are exposed; a read that
// fails leaves them out rather than giving old values.
func TestPrimary(t *testing.T) {
	tests := []struct {
		name string
		read func(context.Context) (Primary, error)
		want map[string]float64
	}{
		{"a primary keeping WAL for a gone standby", func(context.Context) (Primary, error) {
			return Primary{Slots: []ReplicationSlot{{Name: "standby", Active: false, RetainedBytes: 4096}}}, nil
		}, map[string]float64{"jobboard_database_primary": 1,
			"jobboard_replication_slot_active standby": 0, "jobboard_replication_slot_retained_wal_bytes standby": 4096}},
		{"a standby", func(context.Context) (Primary, error) { return Primary{InRecovery: true}, nil },
			map[string]float64{"jobboard_database_primary": 0}},
		{"unreachable", func(context.Context) (Primary, error) { return Primary{}, errors.New("primary unreachable") },
			map[string]float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New()
			if err := m.WatchPrimary(tt.read); err != nil {
				t.Fatal(err)
			}
			got := gatherGauges(t, m, func(name string) bool {
				return name == "jobboard_database_primary" || strings.HasPrefix(name, "jobboard_replication_slot_")
			})
			if !maps.Equal(got, tt.want) {
				t.Errorf("gauges %v, want %v", got, tt.want)
			}
		})
	}
}

// TestKeyWatch: the key watch gauge follows what the watch says at
// scrape time.
func TestKeyWatch(t *testing.T) {
	m := New()
	listening := false
	if err := m.WatchKeys(func() bool { return listening }); err != nil {
		t.Fatal(err)
	}
	for _, want := range []bool{false, true, false} {
		listening = want
		got := gatherGauges(t, m, func(name string) bool { return name == "jobboard_key_watch_listening" })
		if got["jobboard_key_watch_listening"] != oneIf(want) || len(got) != 1 {
			t.Errorf("listening %v: gauge %v", want, got)
		}
	}
}
