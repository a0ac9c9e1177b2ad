package grpcapi

import (
	"context"
	"errors"
	"testing"
	"time"
)

type lazyKey struct{}

func TestLazyDeadline(t *testing.T) {
	tests := []struct {
		name string
		// use does what a lookup would with the context, then says what
		// error it ends with.
		use       func(c *lazyDeadline, cancelParent context.CancelFunc) error
		wantErr   error
		wantTimer bool
	}{
		{"answered from memory: no timer", func(c *lazyDeadline, _ context.CancelFunc) error {
			if c.Value(lazyKey{}) != "v" {
				t.Error("the parent's value is lost")
			}
			return nil
		}, nil, false},
		{"a lookup waits past the deadline", func(c *lazyDeadline, _ context.CancelFunc) error {
			if d, ok := c.Deadline(); !ok || !d.Equal(c.deadline) {
				t.Errorf("deadline %v %v, want %v", d, ok, c.deadline)
			}
			<-c.Done()
			return c.Err()
		}, context.DeadlineExceeded, true},
		{"a child context ends with it", func(c *lazyDeadline, _ context.CancelFunc) error {
			child, cancel := context.WithCancel(c)
			defer cancel()
			<-child.Done()
			return child.Err()
		}, context.DeadlineExceeded, true},
		{"the call ends first", func(c *lazyDeadline, cancelParent context.CancelFunc) error {
			cancelParent()
			<-c.Done()
			return c.Err()
		}, context.Canceled, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent, cancel := context.WithCancel(context.WithValue(context.Background(), lazyKey{}, "v"))
			defer cancel()
			c := withLazyDeadline(parent, time.Now().Add(50*time.Millisecond))
			if err := tt.use(c, cancel); !errors.Is(err, tt.wantErr) {
				t.Errorf("err %v, want %v", err, tt.wantErr)
			}
			if timer := c.bounded != nil; timer != tt.wantTimer {
				t.Errorf("timer set: %v, want %v", timer, tt.wantTimer)
			}
			c.stop()
			if err := c.Err(); err == nil {
				t.Error("not ended by stop")
			}
		})
	}
}
