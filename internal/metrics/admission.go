package metrics

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Admission is the admission control's metrics: jobboard_admission_in_progress
// and jobboard_admission_queued (read at scrape time),
// jobboard_admission_refused_total by reason, and
// jobboard_admission_queue_wait_seconds of the requests that waited and got
// a place. A nil *Admission records nothing.
type Admission struct {
	refused *prometheus.CounterVec
	wait    prometheus.Histogram
}

// Admission registers the admission metrics; state reads the requests in
// progress and queued, reasons are every refusal reason (each starts at
// zero). Nil when m is nil.
func (m *Metrics) Admission(state func() (inProgress, queued int), reasons []string) (*Admission, error) {
	if m == nil {
		return nil, nil
	}
	a := &Admission{
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "admission_refused_total",
			Help: "API requests answered 503 UNAVAILABLE because the server was saturated, by reason: queue_full (every place and the queue taken), account_share (the account held half the queue already), expected_wait (those waiting ahead would take longer than JOBBOARD_ADMISSION_WAIT), wait_timeout (waited JOBBOARD_ADMISSION_WAIT), account_in_progress (waited that long while its account held the places one account may, JOBBOARD_ADMISSION_ACCOUNT_IN_FLIGHT) or queue_bytes (the gRPC messages of the calls waiting would have passed their bound)."},
			[]string{"reason"}),
		wait: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: namespace, Name: "admission_queue_wait_seconds",
			Help:    "Time API requests that found every place taken waited in the queue before getting one.",
			Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}}),
	}
	inProgress := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: namespace, Name: "admission_in_progress",
		Help: "API requests working now (at most JOBBOARD_MAX_IN_FLIGHT)."},
		func() float64 { n, _ := state(); return float64(n) })
	queued := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: namespace, Name: "admission_queued",
		Help: "API requests waiting for a place now (at most JOBBOARD_ADMISSION_QUEUE)."},
		func() float64 { _, n := state(); return float64(n) })
	for _, c := range []prometheus.Collector{a.refused, a.wait, inProgress, queued} {
		if err := m.registry.Register(c); err != nil {
			return nil, fmt.Errorf("register admission metrics: %w", err)
		}
	}
	for _, r := range reasons {
		a.refused.WithLabelValues(r)
	}
	return a, nil
}

// Refused counts one refused request.
func (a *Admission) Refused(reason string) {
	if a != nil {
		a.refused.WithLabelValues(reason).Inc()
	}
}

// Waited records the queue wait of a request that got a place.
func (a *Admission) Waited(d time.Duration) {
	if a != nil {
		a.wait.Observe(d.Seconds())
	}
}
