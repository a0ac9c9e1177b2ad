package leads

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/truckjobs/jobboard/internal/metrics"
	"github.com/truckjobs/jobboard/server/store"
)

// failingUpdates is a delivery store whose endpoint updates after an
// answer fail, as when the database goes away mid-delivery.
type failingUpdates struct {
	deliveryStore
}

var errUpdate = errors.New("database went away")

func (failingUpdates) WebhookDelivered(context.Context, string) error { return errUpdate }

func (failingUpdates) DisableWebhookGone(context.Context, string, int, time.Time) (bool, error) {
	return false, errUpdate
}

// TestDeliveryConcludeStoreErrors: an answer the receiver gave decides the
// job even when recording its effect on the endpoint fails: a 2xx is
// delivered (no retry, which would send the event twice) and a 410 stops
// retrying.
func TestDeliveryConcludeStoreErrors(t *testing.T) {
	w := &deliveryWorker{store: failingUpdates{}, metrics: metrics.New()}
	job := &river.Job[deliveryArgs]{Args: deliveryArgs{Generation: 1}}
	d := delivery{endpoint: store.DeliveryEndpoint{ID: "endpoint"}, log: slog.Default()}
	tests := []struct {
		status  int
		outcome metrics.WebhookOutcome
		cancel  bool
	}{
		{http.StatusOK, metrics.WebhookDelivered, false},
		{http.StatusNoContent, metrics.WebhookDelivered, false},
		{http.StatusGone, metrics.WebhookGone, true},
	}
	for _, tt := range tests {
		outcome, err := w.conclude(context.Background(), job, d, &tt.status, nil)
		if outcome != tt.outcome {
			t.Errorf("status %d: outcome %v, want %v", tt.status, outcome, tt.outcome)
		}
		if cancelled := errors.Is(err, &river.JobCancelError{}); cancelled != tt.cancel || (!tt.cancel && err != nil) {
			t.Errorf("status %d: job result %v, want cancelled %v", tt.status, err, tt.cancel)
		}
	}
}
