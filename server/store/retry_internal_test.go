package store

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/lib/pq"
)

// TestRetryDeadlocks: a run that fails with a deadlock, however wrapped, is
// run again up to the attempts given; any other outcome is returned at once,
// and so is a deadlock once the context has ended.
func TestRetryDeadlocks(t *testing.T) {
	deadlock := &pq.Error{Code: "40P01", Message: "deadlock detected"}
	other := errors.New("no such job")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name     string
		ctx      context.Context
		results  []error // of each run in turn; the last repeats
		wantRuns int
		want     []error // what the error returned wraps; none for nil
	}{
		{"success", context.Background(), []error{nil}, 1, nil},
		{"another error", context.Background(), []error{other}, 1, []error{other}},
		{"a unique violation", context.Background(), []error{&pq.Error{Code: "23505"}}, 1, nil},
		{"a serialization failure", context.Background(), []error{&pq.Error{Code: "40001"}}, 1, nil},
		{"a deadlock, then success", context.Background(), []error{deadlock, nil}, 2, nil},
		{"a wrapped deadlock, then success", context.Background(), []error{fmt.Errorf("save job applications: %w", deadlock), nil}, 2, nil},
		{"a deadlock, then another error", context.Background(), []error{deadlock, other}, 2, []error{other}},
		{"deadlocks every time", context.Background(), []error{deadlock}, 3, []error{deadlock}},
		{"a deadlock, the context ended", cancelled, []error{deadlock, nil}, 1, []error{deadlock, context.Canceled}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runs := 0
			err := retryDeadlocks(tt.ctx, "test", 3, func() error {
				runs++
				return tt.results[min(runs, len(tt.results))-1]
			})
			if runs != tt.wantRuns {
				t.Errorf("%d runs, want %d", runs, tt.wantRuns)
			}
			last := tt.results[min(runs, len(tt.results))-1]
			if tt.want == nil && err != last {
				t.Errorf("returned %v, want the last run's %v", err, last)
			}
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Errorf("returned %v, want it to wrap %v", err, w)
				}
			}
		})
	}
}
