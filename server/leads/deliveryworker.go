package leads

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/riverqueue/river"
	"google.golang.org/protobuf/proto"

	"github.com/truckjobs/jobboard/internal/metrics"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/webhook"
)

// DefaultWebhookDisableAfter is how long every attempt to an endpoint may
// fail before it is disabled: 5 days (docs/api.md, Deliveries).
const DefaultWebhookDisableAfter = 5 * 24 * time.Hour

// DefaultWebhookWorkers is how many deliveries one process sends at once.
// A delivery mostly waits on the receiver (up to the 15 s timeout), so
// many can run on few cores. One account has at most half of them and one
// endpoint at most 4 (deliveryShares), so a slow receiver never holds up
// the other accounts. 20 is also the size of the database pool, which does not starve
// it: a delivery takes a connection only for each of its few short
// statements (load the endpoint and the event, record the attempt, update
// the endpoint), each in its own implicit transaction, and holds none
// while it waits on the receiver.
const DefaultWebhookWorkers = 20

// deliveryStore is what a delivery reads and records (*store.Store).
type deliveryStore interface {
	DeliveryEndpointByID(ctx context.Context, id string) (store.DeliveryEndpoint, error)
	EventByUUID(ctx context.Context, id string) (store.Event, error)
	RecordWebhookAttempt(ctx context.Context, a store.WebhookAttempt) error
	WebhookDelivered(ctx context.Context, endpointID string) error
	WebhookFailed(ctx context.Context, endpointID string, generation int, now, disableBefore time.Time) (bool, error)
	DisableWebhookGone(ctx context.Context, endpointID string, generation int, now time.Time) (bool, error)
}

// deliveryWorker sends an event to a webhook endpoint, one attempt a run,
// retried on the schedule of import callbacks.
type deliveryWorker struct {
	river.WorkerDefaults[deliveryArgs]
	webhook.RetryPolicy
	store  deliveryStore
	client *http.Client
	// render writes the body: the event object, as in the feed.
	render func(proto.Message) ([]byte, error)
	// disableAfter is how long an endpoint may fail before it is disabled.
	disableAfter time.Duration
	// shares keeps each endpoint and each account to its share of this
	// process's delivery workers.
	shares  *deliveryShares
	metrics *metrics.Metrics
}

// NextRetry follows the retry schedule.
func (w *deliveryWorker) NextRetry(job *river.Job[deliveryArgs]) time.Time {
	return w.RetryAt(job.Attempt)
}

// Timeout leaves the HTTP timeout room to expire first.
func (w *deliveryWorker) Timeout(*river.Job[deliveryArgs]) time.Duration { return w.JobTimeout() }

// delivery is one attempt about to be sent.
type delivery struct {
	endpoint store.DeliveryEndpoint
	event    store.Event
	req      *http.Request
	log      *slog.Logger
}

// Work makes one attempt and records it. 2xx is success; 410 disables the
// endpoint; anything else (a redirect, a timeout, a refused address) is
// retried, unless the endpoint has failed for disableAfter, which disables
// it. Deliveries to an endpoint deleted, disabled or enabled again since
// they were queued are dropped unsent. A delivery whose endpoint or account
// has its share of the workers in flight is snoozed unsent (deliveryShares).
func (w *deliveryWorker) Work(ctx context.Context, job *river.Job[deliveryArgs]) error {
	endpoint, err := w.endpoint(ctx, job)
	if err != nil {
		return w.notSent(ctx, job, err)
	}
	done, wait, ok := w.shares.take(endpoint.AccountID, endpoint.ID)
	if !ok {
		// Not an attempt: River gives the attempt back on a snooze.
		return river.JobSnooze(wait)
	}
	defer done()
	d, err := w.prepare(ctx, job, endpoint)
	if err != nil {
		return w.notSent(ctx, job, err)
	}
	sent := webhook.Send(w.client, d.req)
	sendErr, elapsed := sent.Err, sent.Took
	attempt := store.WebhookAttempt{EndpointID: d.endpoint.ID, EventID: job.Args.EventID, EventType: d.event.Type,
		Attempt: job.Attempt, AttemptedAt: sent.Started, DurationMS: int(elapsed.Milliseconds()), StatusCode: sent.Status}
	if sendErr != nil {
		// The record is the tenant's to read: a fixed description, never
		// the client's error, which may name a resolved address. The log
		// line of conclude keeps the error itself.
		attempt.Error = new(webhook.Describe(sendErr, w.RetryPolicy.Timeout))
	}
	if err := w.store.RecordWebhookAttempt(context.WithoutCancel(ctx), attempt); err != nil {
		slog.ErrorContext(ctx, "record webhook attempt", "error", err)
	}
	outcome, err := w.conclude(context.WithoutCancel(ctx), job, d, attempt.StatusCode, sendErr)
	w.metrics.WebhookDelivery(outcome, elapsed)
	return err
}

// notSent is the job's result when err kept the delivery from being sent:
// a dropped delivery is counted, and the last attempt's failure ends the
// job, once, at error level.
func (w *deliveryWorker) notSent(ctx context.Context, job *river.Job[deliveryArgs], err error) error {
	if errors.Is(err, &river.JobCancelError{}) {
		w.metrics.WebhookDelivery(metrics.WebhookDropped, 0)
	} else if w.LastAttempt(job.Attempt) {
		slog.ErrorContext(ctx, "webhook not delivered: the last attempt failed before sending; no more retries",
			"endpoint", store.EndpointID(job.Args.EndpointID), "event", store.EventID(job.Args.EventID),
			"attempts", job.Attempt, "error", err)
		return river.JobCancel(err)
	}
	return err
}

// endpoint loads the delivery's endpoint, or cancels the job when the
// endpoint is gone or no longer the one it was queued for.
func (w *deliveryWorker) endpoint(ctx context.Context, job *river.Job[deliveryArgs]) (store.DeliveryEndpoint, error) {
	e, err := w.store.DeliveryEndpointByID(ctx, job.Args.EndpointID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return e, river.JobCancel(errors.New("webhook endpoint deleted"))
	case err != nil:
		return e, err
	case !e.Enabled || e.Generation != job.Args.Generation:
		return e, river.JobCancel(errors.New("webhook endpoint disabled since the delivery was queued"))
	}
	return e, nil
}

// prepare loads the event and builds the signed request to endpoint, or
// cancels the job when there is nothing to send any more.
func (w *deliveryWorker) prepare(ctx context.Context, job *river.Job[deliveryArgs], endpoint store.DeliveryEndpoint) (delivery, error) {
	d := delivery{endpoint: endpoint}
	var err error
	d.event, err = w.store.EventByUUID(ctx, job.Args.EventID)
	if errors.Is(err, store.ErrNotFound) {
		return d, river.JobCancel(errors.New("event cleaned up"))
	}
	if err != nil {
		return d, err
	}
	body, err := w.render(eventMessage(d.event))
	if err != nil {
		return d, err
	}
	d.req, err = http.NewRequestWithContext(ctx, http.MethodPost, d.endpoint.URL, bytes.NewReader(body))
	if err != nil {
		return d, river.JobCancel(fmt.Errorf("webhook URL %q: %w", webhook.Redact(d.endpoint.URL), webhook.RedactError(err)))
	}
	now := time.Now()
	if err := webhook.SignedHeaders(d.req.Header, d.event.ID, now, body, d.endpoint.SigningSecrets(now)...); err != nil {
		return d, river.JobCancel(err)
	}
	if auth := authorization(d.endpoint); auth != "" {
		d.req.Header.Set("Authorization", auth)
	}
	d.log = slog.With("endpoint", store.EndpointID(d.endpoint.ID), "event", d.event.ID, "attempt", job.Attempt,
		"url", webhook.Redact(d.endpoint.URL))
	return d, nil
}

// authorization is the Authorization header the endpoint asked for, or "".
func authorization(e store.DeliveryEndpoint) string {
	if e.AuthType == nil || e.AuthSecret == nil {
		return ""
	}
	switch *e.AuthType {
	case "basic":
		user := ""
		if e.AuthUsername != nil {
			user = *e.AuthUsername
		}
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+*e.AuthSecret))
	case "bearer":
		return "Bearer " + *e.AuthSecret
	}
	return ""
}

// conclude acts on the answer (status nil when none came) and returns the
// attempt's outcome and the job's result.
func (w *deliveryWorker) conclude(ctx context.Context, job *river.Job[deliveryArgs], d delivery, status *int, sendErr error) (metrics.WebhookOutcome, error) {
	id, gen := d.endpoint.ID, job.Args.Generation
	switch {
	case status != nil && *status >= 200 && *status < 300:
		d.log.InfoContext(ctx, "webhook delivered", "status", *status)
		// The receiver has the event: an error clearing the failure
		// record must not make the queue send it again.
		if err := w.store.WebhookDelivered(ctx, id); err != nil {
			d.log.ErrorContext(ctx, "webhook delivered but its endpoint's failure record not cleared", "error", err)
		}
		return metrics.WebhookDelivered, nil
	case status != nil && *status == http.StatusGone:
		// The receiver said it wants no more: stop retrying even when the
		// endpoint could not be disabled; the next event's 410 tries again.
		disabled, err := w.store.DisableWebhookGone(ctx, id, gen, time.Now())
		if err != nil {
			d.log.ErrorContext(ctx, "endpoint answered 410 Gone but could not be disabled", "error", err)
		}
		w.disabled(ctx, d, disabled, metrics.DisabledGone)
		return metrics.WebhookGone, river.JobCancel(errors.New("endpoint answered 410 Gone"))
	}
	failure, why := sendErr, []any{"error", webhook.RedactError(sendErr)}
	if failure == nil {
		failure, why = fmt.Errorf("endpoint answered %d", *status), []any{"status", *status}
	}
	now := time.Now()
	disabled, err := w.store.WebhookFailed(ctx, id, gen, now, now.Add(-w.disableAfter))
	if err != nil {
		return metrics.WebhookFailedRetry, errors.Join(failure, err)
	}
	if disabled {
		w.disabled(ctx, d, true, metrics.DisabledFailing)
		return metrics.WebhookFailing, river.JobCancel(failure)
	}
	// The last failed attempt says so, once, at error level, like
	// callbacks (docs/api.md, Deliveries).
	if w.LastAttempt(job.Attempt) {
		d.log.ErrorContext(ctx, "webhook not delivered: the last attempt failed; no more retries",
			append(why, "attempts", job.Attempt)...)
		return metrics.WebhookGaveUp, river.JobCancel(failure)
	}
	d.log.WarnContext(ctx, "webhook delivery failed", why...)
	return metrics.WebhookFailedRetry, failure
}

// disabled logs and counts an endpoint this attempt disabled, once: when
// two attempts race, only the one whose update took effect does.
func (w *deliveryWorker) disabled(ctx context.Context, d delivery, byThis bool, reason string) {
	if !byThis {
		return
	}
	w.metrics.WebhookEndpointDisabled(reason)
	slog.WarnContext(ctx, "webhook endpoint disabled", "endpoint", store.EndpointID(d.endpoint.ID), "reason", reason)
}
