package imports

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/truckjobs/jobboard/server/jobs"
	"github.com/truckjobs/jobboard/server/leads"

	"github.com/riverqueue/river"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/callmeta"
	"github.com/truckjobs/jobboard/internal/metrics"
	"github.com/truckjobs/jobboard/internal/rules"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/pagetoken"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/webhook"
)

// MaxIdempotencyKey is the longest Idempotency-Key accepted (docs/api.md,
// Job imports; the most jobs an import may list is rules.MaxImportJobs).
const MaxIdempotencyKey = 255

// DefaultImportAttempts is how many times the queue tries an import: the
// waits between tries (about 1 s, 16 s, 81 s, ... 40 min: the queue's
// attempt^4 seconds) ride out a database outage of over an hour, and an
// import that still fails ends complete with every job failed.
const DefaultImportAttempts = 8

// JobImportService implements jobboard.v2.JobImportService.
type JobImportService struct {
	restv2.UnimplementedJobImportServiceServer
	store *store.Store
	queue *store.Queue
	// importAttempts is how many times the queue tries an import.
	importAttempts int
	links          call.Links
	// allowPrivateCallbacks lifts the public-address rule (development, tests).
	allowPrivateCallbacks bool
	// tokens signs the page tokens of an import's errors over gRPC, with
	// the key of the other lists.
	tokens pagetoken.Signer
}

// CreateJobImport stores the import and queues it in one transaction.
func (s *JobImportService) CreateJobImport(ctx context.Context, req *restv2.CreateJobImportRequest) (*restv2.CreateJobImportResponse, error) {
	caller, err := call.From(ctx)
	if err != nil {
		return nil, err
	}
	if n := len(req.GetJobs()); n > rules.MaxImportJobs {
		return nil, call.InvalidFieldText("jobs", fmt.Sprintf("%d jobs is more than the %d an import may hold", n, rules.MaxImportJobs))
	}
	if req.CallbackUrl != nil {
		if err := webhook.CheckURL(ctx, req.GetCallbackUrl(), s.allowPrivateCallbacks); err != nil {
			return nil, call.InvalidArgument(call.FieldViolation{Field: "callback_url", Label: "callbackUrl",
				Description: call.Quoted(req.GetCallbackUrl()) + " " + err.Error()})
		}
	}
	key := call.FirstValue(call.Metadata(ctx), callmeta.IdempotencyKey)
	if len(key) > MaxIdempotencyKey {
		return nil, call.InvalidArgument(call.FieldViolation{Field: callmeta.IdempotencyKey, Label: "Idempotency-Key",
			Description: fmt.Sprintf("%d characters is longer than the %d allowed", len(key), MaxIdempotencyKey)})
	}
	// The request's hash is taken while its jobs are written in their
	// stored form: both only read the request.
	var hash string
	var hashErr error
	var hashing sync.WaitGroup
	hashing.Go(func() { hash, hashErr = importRequestHash(req) })
	payload, err := jobs.StoredForm(req.GetJobs())
	hashing.Wait()
	if err = errors.Join(err, hashErr); err != nil {
		return nil, call.Internal(ctx, err)
	}
	n := store.NewImport{AccountID: caller.AccountID, Payload: payload, CallbackURL: req.CallbackUrl,
		DeleteJobs: req.GetDeleteJobs(), BaseURL: s.links.Base(ctx), IdempotencyKey: key, RequestHash: hash,
		RequestID: call.RequestID(ctx)}
	// The import and its queue job are created together or not at all; a
	// key used in the window answers the import it created.
	var imp store.JobImport
	err = s.store.InTx(ctx, func(tx *store.Tx) error {
		if key != "" {
			prior, found, err := tx.ImportByIdempotencyKey(ctx, n.AccountID, key, hash)
			if err != nil || found {
				imp = prior
				return err
			}
		}
		var err error
		if imp, err = tx.InsertImport(ctx, n); err != nil {
			return err
		}
		_, err = s.queue.InsertTx(ctx, tx.SQL(), importArgs{ImportID: imp.ID}, &river.InsertOpts{Queue: Queue, MaxAttempts: s.importAttempts})
		return err
	})
	if errors.Is(err, store.ErrIdempotencyMismatch) {
		return nil, status.Error(codes.FailedPrecondition, "Idempotency-Key: already used in the last 24 hours with a different request")
	}
	if err != nil {
		return nil, call.Internal(ctx, err)
	}
	msg, err := importMessage(imp)
	if err != nil {
		return nil, call.Internal(ctx, err)
	}
	return &restv2.CreateJobImportResponse{Data: msg, Links: importLinks(imp)}, nil
}

// GetJobImport returns an import of the account.
func (s *JobImportService) GetJobImport(ctx context.Context, req *restv2.GetJobImportRequest) (*restv2.GetJobImportResponse, error) {
	imp, err := call.AccountRecord(ctx, func() string { return "job import " + call.Quoted(req.GetId()) }, func(accountID int64) (store.JobImport, error) {
		return s.store.JobImport(ctx, accountID, req.GetId())
	})
	if err != nil {
		return nil, err
	}
	msg, err := importMessage(imp)
	if err != nil {
		return nil, call.Internal(ctx, err)
	}
	return &restv2.GetJobImportResponse{Data: msg, Links: importLinks(imp)}, nil
}

// jobImportWindow is GetJobImport's answer with only w's entries of the
// import's result lists, and the lists' lengths: a gRPC page decodes the
// entries it answers, not the tens of thousands it does not.
func (s *JobImportService) jobImportWindow(ctx context.Context, id string, w store.ResultsWindow) (*restv2.GetJobImportResponse, store.ResultsLengths, error) {
	var lengths store.ResultsLengths
	imp, err := call.AccountRecord(ctx, func() string { return "job import " + call.Quoted(id) }, func(accountID int64) (store.JobImport, error) {
		imp, n, err := s.store.JobImportWindow(ctx, accountID, id, w)
		lengths = n
		return imp, err
	})
	if err != nil {
		return nil, store.ResultsLengths{}, err
	}
	msg, err := importMessage(imp)
	if err != nil {
		return nil, store.ResultsLengths{}, call.Internal(ctx, err)
	}
	return &restv2.GetJobImportResponse{Data: msg, Links: importLinks(imp)}, lengths, nil
}

func importLinks(imp store.JobImport) *restv2.JobImportLinks {
	return &restv2.JobImportLinks{Self: imp.BaseURL + "/api/v2.0/job-imports/" + imp.ID}
}

// importMessage maps a stored import to its API form.
func importMessage(imp store.JobImport) (*restv2.JobImport, error) {
	msg := &restv2.JobImport{
		Id:          imp.ID,
		RequestedAt: call.Time(imp.RequestedAt),
		Status:      string(imp.Status),
	}
	if imp.CompletedAt != nil {
		msg.CompletedAt = new(call.Time(*imp.CompletedAt))
	}
	if imp.Results != nil {
		msg.Results = resultsMessage(imp.Results)
	}
	return msg, nil
}

// Queue is the queue imports wait in. Their payloads are compressed
// (store.ImportPayload), which servers of earlier versions cannot read:
// those work only River's default queue, where they queued imports, so
// during a rolling upgrade none of them takes an import queued by this
// version, while this version still runs the imports they queued.
const Queue = "job_imports"

// importArgs is the queue job that processes one import.
type importArgs struct {
	ImportID string `json:"import_id"`
}

// Kind names the queue job.
func (importArgs) Kind() string { return "job_import" }

// importWorker processes imports taken from the queue.
type importWorker struct {
	river.WorkerDefaults[importArgs]
	store *store.Store
	jobs  *jobs.Service
	importCompleter
	// timeout is how long one attempt may run, named in the results of an
	// import whose last attempt ran out of time.
	timeout time.Duration
	metrics *metrics.Metrics
}

// Work processes the import. When the queue will not run it again (the
// last attempt failed, or it can never run), the import is completed with
// every job failed and its callback queued, so no import stays pending or
// running for ever; should even that fail, the sweep completes it later.
func (w *importWorker) Work(ctx context.Context, job *river.Job[importArgs]) error {
	started := time.Now()
	log := slog.With("id", job.Args.ImportID)
	ran, err := w.process(ctx, job, &log)
	outcome := metrics.ImportComplete
	switch {
	case err == nil && !ran: // already complete: a rescued run found nothing to do
		return nil
	case err == nil:
	case errors.Is(err, &river.JobCancelError{}) || job.Attempt >= job.MaxAttempts:
		giveUpErr := w.giveUp(ctx, job, err)
		switch {
		case giveUpErr == nil:
			outcome = metrics.ImportGaveUp
			log.ErrorContext(ctx, "job import failed and will not be retried; completed with every job failed",
				"attempt", job.Attempt, "max_attempts", job.MaxAttempts, "error", err)
			err = nil
		case errors.Is(giveUpErr, store.ErrNotFound):
			outcome = metrics.ImportCancelled
			log.WarnContext(ctx, "job import cancelled", "error", err)
		default:
			outcome = metrics.ImportFailed
			log.ErrorContext(ctx, "job import failed on its last attempt and could not be completed; the sweep will complete it",
				"error", err, "complete_error", giveUpErr)
		}
	default:
		outcome = metrics.ImportFailed
		log.WarnContext(ctx, "job import failed; the queue retries it", "attempt", job.Attempt, "error", err)
	}
	w.metrics.ImportFinished(outcome, time.Since(started))
	return err
}

// process marks the import running, then, in one transaction: locks the
// import, validates and writes its jobs, completes it with their results,
// queues its callback, writes its event and marks the queue job done. A
// crash part-way leaves nothing written and the queue runs the import
// again from the start. ran is false when the import was already complete
// (a rescued run that found nothing to do).
func (w *importWorker) process(ctx context.Context, job *river.Job[importArgs], log **slog.Logger) (ran bool, err error) {
	started := time.Now()
	id := job.Args.ImportID
	imp, payload, err := w.store.StartImport(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, river.JobCancel(fmt.Errorf("job import %s no longer exists", id))
	}
	if err != nil {
		return false, err
	}
	if imp.RequestID != nil {
		*log = (*log).With("request_id", *imp.RequestID)
	}
	var processed int32
	// A deadlock is not retried here but fails the run like any other
	// error: the queue runs the import again whole, as one transaction it
	// must be.
	err = w.store.InTx(ctx, func(tx *store.Tx) error {
		ran = false
		imp, err := tx.LockImport(ctx, id)
		if err != nil {
			return err
		}
		if imp.Status != domain.ImportComplete {
			results, err := w.jobs.ImportJobs(ctx, tx, imp.AccountID, payload, imp.DeleteJobs)
			if err != nil {
				return err
			}
			processed = results.Processed
			scrubNUL(results)
			if err := w.complete(ctx, tx, store.QueueFromContext(ctx), imp, results); err != nil {
				return err
			}
			ran = true
		}
		return store.CompleteQueueJob(ctx, tx, job)
	})
	if errors.Is(err, jobs.ErrUnreadablePayload) {
		return false, river.JobCancel(fmt.Errorf("job import %s: %w", id, err))
	}
	if err != nil {
		return false, fmt.Errorf("job import %s: %w", id, err)
	}
	if ran {
		(*log).InfoContext(ctx, "job import complete", "account", imp.AccountID, "jobs", processed,
			"seconds", time.Since(started).Seconds())
	}
	return ran, nil
}

// importCompleter completes imports: the worker when it ran one or gave
// up on it, the sweep when the queue left one unfinished.
type importCompleter struct {
	// outbox writes the job_import.completed event.
	outbox *leads.Outbox
	// callbackAttempts is how many tries a completion callback gets.
	callbackAttempts int
}

// complete records imp complete with results, dated by the database's
// clock, and in the same transaction queues its callback and writes its
// job_import.completed event, so the three commit together or not at
// all. The event is rendered while the import's row is written: it needs
// no database, and the row (6 MB of results for an import of 40,000
// errors) takes a while.
func (c importCompleter) complete(ctx context.Context, tx *store.Tx, queue *store.Queue, imp store.JobImport, results *store.ImportResults) error {
	now, err := tx.Now(ctx)
	if err != nil {
		return err
	}
	imp.Status, imp.CompletedAt, imp.Results = domain.ImportComplete, &now, results
	var event store.NewEvent
	var renderErr error
	var panicked any
	var rendering sync.WaitGroup
	rendering.Go(func() {
		defer func() { panicked = recover() }()
		event, renderErr = completedEvent(c.outbox, imp)
	})
	err = tx.CompleteImport(ctx, imp)
	rendering.Wait()
	if panicked != nil {
		panic(panicked) // on the caller's goroutine, where the queue recovers it
	}
	if err = errors.Join(err, renderErr); err != nil {
		return err
	}
	if err := queueCallback(ctx, queue, tx, imp, c.callbackAttempts); err != nil {
		return err
	}
	_, err = c.outbox.Write(ctx, tx, imp.AccountID, []store.NewEvent{event})
	return err
}

// queueCallback queues the completion callback of imp, if it has one.
func queueCallback(ctx context.Context, client *store.Queue, tx *store.Tx, imp store.JobImport, attempts int) error {
	if imp.CallbackURL == nil {
		return nil
	}
	_, err := client.InsertTx(ctx, tx.SQL(), callbackArgs{ImportID: imp.ID, WebhookID: webhook.NewMessageID()},
		&river.InsertOpts{MaxAttempts: attempts})
	if err != nil {
		return fmt.Errorf("queue callback: %w", err)
	}
	return nil
}

// scrubNUL keeps NUL characters echoed from the request out of the results:
// entries escape them where they are made (call.EscapeNUL), and this escapes them
// the same way in anything else. The results were jsonb until migration
// 0019, which refuses \u0000 (the import could then never complete); json
// keeps it, but C-string clients (PHP's extensions, shell tools) would cut
// the text at it.
func scrubNUL(r *store.ImportResults) {
	fix := func(p *string) {
		if p != nil && strings.ContainsRune(*p, 0) {
			*p = call.EscapeNUL(*p)
		}
	}
	for _, e := range r.Errors {
		fix(e.ReferenceNumber)
		for i := range e.Messages {
			fix(&e.Messages[i])
		}
	}
	for i := range r.IgnoredValues {
		e := &r.IgnoredValues[i]
		fix(e.ReferenceNumber)
		fix(e.Field)
		fix(e.Value)
		fix(&e.Message)
	}
}

// importRequestHash identifies a request for its Idempotency-Key: the jobs
// in deterministic protobuf binary, which depends on field numbers, not
// names, so neither a renamed proto field nor a change of the stored form
// makes a retry look like another request (hashes stored before the
// stored form changed still match). The bytes hashed are those of a
// PostJobsRequest holding the jobs, written one job at a time: each is its
// field's tag, its length and its own encoding, so an import of 50,000
// jobs is never encoded whole.
func importRequestHash(req *restv2.CreateJobImportRequest) (string, error) {
	hash := sha256.New()
	opts := proto.MarshalOptions{Deterministic: true}
	var job []byte
	for _, in := range req.GetJobs() {
		var err error
		job, err = opts.MarshalAppend(job[:0], in)
		if err != nil {
			return "", err
		}
		prefix := protowire.AppendTag(nil, postJobsRequestJobs, protowire.BytesType)
		hash.Write(protowire.AppendVarint(prefix, uint64(len(job))))
		hash.Write(job)
	}
	fmt.Fprintf(hash, "|%s|%t", req.GetCallbackUrl(), req.GetDeleteJobs())
	return hex.EncodeToString(hash.Sum(nil)), nil
}

// postJobsRequestJobs is the field number of PostJobsRequest.jobs, whose
// encoding the request hash is.
var postJobsRequestJobs = (&restv2.PostJobsRequest{}).ProtoReflect().Descriptor().Fields().ByName("jobs").Number()

// completedEvent renders the job_import.completed event of imp, given
// as it completes, for the transaction that completes it to write. Its data
// is the import as the data member of GET job-imports/{id} shows it once
// that transaction commits, but for results.errors and
// results.ignoredValues, cut to their first page (at most 1,000 entries of
// each, fewer when large), each followed by the number cut
// (results.errorsOmitted, results.ignoredValuesOmitted): either whole list
// can be tens of megabytes, past what a gRPC client or a receiver takes in
// one event (docs/api.md 7). It needs no
// database, so importCompleter.complete renders it while the import's row
// is written.
func completedEvent(o *leads.Outbox, imp store.JobImport) (store.NewEvent, error) {
	// Only the entries a first page can hold become messages: the results
	// of a large import (40,000 errors) are otherwise held a second time,
	// as messages, while the import's row is written.
	all := imp.Results
	if all != nil {
		head := *all
		head.Errors = head.Errors[:min(len(head.Errors), MaxResultsPage)]
		head.IgnoredValues = head.IgnoredValues[:min(len(head.IgnoredValues), MaxResultsPage)]
		imp.Results = &head
	}
	msg, err := importMessage(imp)
	if err != nil {
		return store.NewEvent{}, err
	}
	if r := msg.GetResults(); r != nil {
		errs, ignored := importResultsPage(r, importResultsPosition{}, MaxResultsPage, importJSONSizes)
		r.ErrorsOmitted, r.IgnoredValuesOmitted = proto.Int32(int32(len(all.Errors)-len(errs))), proto.Int32(int32(len(all.IgnoredValues)-len(ignored)))
		r.Errors, r.IgnoredValues = errs, ignored
	}
	// The data object as GET writes it, by the same renderer, so the event
	// can never drift from what GET shows.
	return o.Event(domain.EventImportCompleted, msg)
}
