package store_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/lib/pq"

	"github.com/truckjobs/jobboard/server/store"
)

func TestIsUnavailable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", fmt.Errorf("list jobs: %w", &net.OpError{Op: "dial", Err: errors.New("connection refused")}), true},
		{"connection failure", &pq.Error{Code: "08006"}, true},
		{"admin shutdown", &pq.Error{Code: "57P01"}, true},
		{"starting up", &pq.Error{Code: "57P03"}, true},
		{"unique violation", &pq.Error{Code: "23505"}, false},
		{"syntax error", &pq.Error{Code: "42601"}, false},
		{"cancelled", context.Canceled, false},
		{"not found", store.ErrNotFound, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := store.IsUnavailable(tt.err); got != tt.want {
				t.Errorf("IsUnavailable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
