package imports

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/riverqueue/river"
	"google.golang.org/protobuf/proto"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/metrics"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/webhook"
)

// callbackArgs is the queue job that delivers one import's completion
// callback. The webhook id is fixed when the job is queued, so every retry
// carries the same one.
type callbackArgs struct {
	ImportID  string `json:"import_id"`
	WebhookID string `json:"webhook_id"`
}

// Kind names the queue job.
func (callbackArgs) Kind() string { return "job_import_callback" }

// callbackWorker posts completed imports to their callbackUrl.
type callbackWorker struct {
	river.WorkerDefaults[callbackArgs]
	webhook.RetryPolicy
	store  *store.Store
	client *http.Client
	// render writes the body: the JSON of retrieving the import.
	render  func(proto.Message) ([]byte, error)
	metrics *metrics.Metrics
}

// NextRetry follows the retry schedule.
func (w *callbackWorker) NextRetry(job *river.Job[callbackArgs]) time.Time {
	return w.RetryAt(job.Attempt)
}

// Timeout leaves the HTTP timeout room to expire first.
func (w *callbackWorker) Timeout(*river.Job[callbackArgs]) time.Duration { return w.JobTimeout() }

// Work makes one delivery attempt and records it. A 2xx answer is success,
// 410 Gone stops the retries, anything else (including a redirect, a
// timeout or a refused address) is retried on the schedule.
func (w *callbackWorker) Work(ctx context.Context, job *river.Job[callbackArgs]) error {
	imp, req, err := w.request(ctx, job)
	if err != nil {
		// Failing before anything was sent (the database, say) is a failed
		// attempt too; the last one says so.
		if w.LastAttempt(job.Attempt) && !errors.Is(err, &river.JobCancelError{}) {
			slog.ErrorContext(ctx, "callback not delivered: the last attempt failed before sending; no more retries",
				"import", job.Args.ImportID, "webhook_id", job.Args.WebhookID, "attempts", job.Attempt, "error", err)
			return river.JobCancel(err)
		}
		return err
	}
	sent := webhook.Send(w.client, req)
	sendErr := sent.Err
	status := 0
	if sent.Status != nil {
		status = *sent.Status
	}
	attempt := store.CallbackAttempt{ImportID: imp.ID, WebhookID: job.Args.WebhookID, Attempt: job.Attempt,
		AttemptedAt: sent.Started, DurationMS: int(sent.Took.Milliseconds()), StatusCode: sent.Status}
	if sendErr != nil {
		attempt.Error = new(webhook.RedactError(sendErr).Error())
	}
	if err := w.store.RecordCallbackAttempt(context.WithoutCancel(ctx), attempt); err != nil {
		slog.ErrorContext(ctx, "record callback attempt", "error", err)
	}
	log := slog.With("import", imp.ID, "webhook_id", job.Args.WebhookID, "attempt", job.Attempt, "url", webhook.Redact(*imp.CallbackURL))
	if imp.RequestID != nil {
		log = log.With("request_id", *imp.RequestID)
	}
	// A failed attempt is the last when the queue will not try again; that
	// one says so, once, at error level (docs/api.md, Job imports).
	last := w.LastAttempt(job.Attempt)
	failed := metrics.CallbackFailedRetry
	if last {
		failed = metrics.CallbackGaveUp
		log = log.With("attempts", job.Attempt)
	}
	switch {
	case sendErr != nil:
		w.metrics.CallbackAttempt(failed)
		if last {
			log.ErrorContext(ctx, "callback not delivered: the last attempt failed; no more retries", "error", sendErr)
			return river.JobCancel(fmt.Errorf("callback: %w", sendErr))
		}
		log.WarnContext(ctx, "callback failed", "error", sendErr)
		return fmt.Errorf("callback: %w", sendErr)
	case status >= 200 && status < 300:
		w.metrics.CallbackAttempt(metrics.CallbackDelivered)
		log.InfoContext(ctx, "callback delivered", "status", status)
		return nil
	case status == http.StatusGone:
		w.metrics.CallbackAttempt(metrics.CallbackGone)
		log.InfoContext(ctx, "callback refused with 410 Gone; no more retries")
		return river.JobCancel(errors.New("receiver answered 410 Gone"))
	default:
		w.metrics.CallbackAttempt(failed)
		if last {
			log.ErrorContext(ctx, "callback not delivered: the last attempt failed; no more retries", "status", status)
			return river.JobCancel(fmt.Errorf("callback: receiver answered %d", status))
		}
		log.WarnContext(ctx, "callback failed", "status", status)
		return fmt.Errorf("callback: receiver answered %d", status)
	}
}

// request builds the signed delivery of the import of job.
func (w *callbackWorker) request(ctx context.Context, job *river.Job[callbackArgs]) (store.JobImport, *http.Request, error) {
	imp, err := w.store.ImportByIDAnyAccount(ctx, job.Args.ImportID)
	if errors.Is(err, store.ErrNotFound) {
		return imp, nil, river.JobCancel(fmt.Errorf("job import %s no longer exists", job.Args.ImportID))
	}
	if err != nil {
		return imp, nil, err
	}
	if imp.CallbackURL == nil {
		return imp, nil, river.JobCancel(fmt.Errorf("job import %s has no callback URL", imp.ID))
	}
	account, err := w.store.Account(ctx, imp.AccountID)
	if err != nil {
		return imp, nil, err
	}
	data, err := importMessage(imp)
	if err != nil {
		return imp, nil, err
	}
	body, err := w.render(&restv2.GetJobImportResponse{Data: data, Links: importLinks(imp)})
	if err != nil {
		return imp, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, *imp.CallbackURL, bytes.NewReader(body))
	if err != nil {
		return imp, nil, river.JobCancel(fmt.Errorf("callback URL %q: %w", webhook.Redact(*imp.CallbackURL), webhook.RedactError(err)))
	}
	if err := webhook.SignedHeaders(req.Header, job.Args.WebhookID, time.Now(), body, account.SigningSecrets()...); err != nil {
		return imp, nil, river.JobCancel(err)
	}
	// The receiver can match the delivery to the request that created the
	// import, as our logs do.
	if imp.RequestID != nil {
		req.Header.Set("X-Request-Id", *imp.RequestID)
	}
	return imp, req, nil
}
