package server

import (
	"log/slog"
	"testing"

	"github.com/truckjobs/jobboard/internal/testfix"
)

// captureLog sends the default logger's JSON lines to the returned buffer
// until the test ends.
func captureLog(t *testing.T) *testfix.SyncBuffer {
	t.Helper()
	var out testfix.SyncBuffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&out, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &out
}
