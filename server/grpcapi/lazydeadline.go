package grpcapi

import (
	"context"
	"sync"
	"time"
)

// lazyDeadline is a context ending at deadline, whose timer is set only
// when something first asks when it ends (Deadline, Done or Err). The tap
// handle bounds its key lookups so: most calls' keys are answered from
// memory, which never asks, and setting and stopping a timer for each of
// them cost a percent of a GetJob call's CPU. Values come from the parent
// directly.
type lazyDeadline struct {
	context.Context
	deadline time.Time

	mu      sync.Mutex
	bounded context.Context
	cancel  context.CancelFunc
	stopped bool
}

func withLazyDeadline(parent context.Context, deadline time.Time) *lazyDeadline {
	return &lazyDeadline{Context: parent, deadline: deadline}
}

// ctx is the bounded context, made on first use; once stopped, an ended one.
func (c *lazyDeadline) ctx() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bounded == nil {
		c.bounded, c.cancel = context.WithDeadline(c.Context, c.deadline)
		if c.stopped {
			c.cancel()
		}
	}
	return c.bounded
}

func (c *lazyDeadline) Deadline() (time.Time, bool) { return c.ctx().Deadline() }
func (c *lazyDeadline) Done() <-chan struct{}       { return c.ctx().Done() }
func (c *lazyDeadline) Err() error                  { return c.ctx().Err() }

// stop ends the context and releases its timer, as a CancelFunc does.
func (c *lazyDeadline) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	if c.cancel != nil {
		c.cancel()
	}
}
