// Package imports is the queued job imports: accepting one (idempotent by
// its key), running it in one transaction on the queue, completing it with
// its results and its job_import.completed event, calling its callback
// back, and sweeping the imports the queue gave up on (docs/api.md, Job
// imports). Its jobs are run by package jobs; its event is written through
// the outbox of package leads.
package imports
