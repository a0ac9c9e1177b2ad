package webhook

import (
	crand "crypto/rand"
	"encoding/hex"
	"math/rand/v2"
	"time"
)

// DefaultRetrySchedule is the wait before each retry of a callback or a
// delivery whose receiver failed: about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h
// and 10 h.
var DefaultRetrySchedule = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
}

// DefaultTimeout bounds one attempt.
const DefaultTimeout = 15 * time.Second

// RetryPolicy is how callbacks and webhook deliveries are retried: the
// wait before each retry and the bound on one attempt.
type RetryPolicy struct {
	Timeout  time.Duration
	Schedule []time.Duration
}

// NewRetryPolicy is the policy of timeout and schedule, the defaults
// standing in for a zero timeout and an empty schedule.
func NewRetryPolicy(timeout time.Duration, schedule []time.Duration) RetryPolicy {
	p := RetryPolicy{Timeout: timeout, Schedule: schedule}
	if len(p.Schedule) == 0 {
		p.Schedule = DefaultRetrySchedule
	}
	if p.Timeout <= 0 {
		p.Timeout = DefaultTimeout
	}
	return p
}

// MaxAttempts is the first try plus one per scheduled retry.
func (p RetryPolicy) MaxAttempts() int { return len(p.Schedule) + 1 }

// LastAttempt says whether attempt is the last of this process's schedule:
// the one rule for callbacks and deliveries. The worker, not the queue job,
// decides: whoever queued the job (a server, the CLI's drivers import, an
// earlier release) need not know the schedule, and a failed last attempt
// ends the job (river.JobCancel) whatever its MaxAttempts.
func (p RetryPolicy) LastAttempt(attempt int) bool { return attempt >= p.MaxAttempts() }

// RetryAt waits the scheduled time after the attempt that failed, give or
// take 10%, so receivers coming back from an outage are not hit all at once.
func (p RetryPolicy) RetryAt(attempt int) time.Time {
	i := min(max(attempt-1, 0), len(p.Schedule)-1)
	wait := p.Schedule[i]
	jitter := time.Duration((rand.Float64()*0.2 - 0.1) * float64(wait))
	return time.Now().Add(wait + jitter)
}

// JobTimeout bounds the queue job of one attempt, leaving the HTTP
// timeout room to expire first.
func (p RetryPolicy) JobTimeout() time.Duration { return p.Timeout + 5*time.Second }

// NewMessageID returns a message id in the msg_ form Standard Webhooks uses.
func NewMessageID() string {
	b := make([]byte, 16)
	_, _ = crand.Read(b)
	return "msg_" + hex.EncodeToString(b)
}
