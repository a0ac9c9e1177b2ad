package server

import (
	"testing"

	"github.com/truckjobs/jobboard/internal/logtest"
)

// captureLog sends the default logger's JSON lines to the returned buffer
// until the test ends.
func captureLog(t *testing.T) *logtest.Buffer {
	return logtest.Capture(t)
}
