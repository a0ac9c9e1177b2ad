// Package testfix holds the fixtures several packages' tests share:
// waiting for something another goroutine or process does, a buffer written concurrently and read by the test, a
// folder a test's PostgreSQL can use, and watching that server's process.
// Only tests import it.
package testfix

import (
	"time"
)

// pollEvery is how often Eventually checks: short next to the waits it
// serves, long enough not to busy a core.
const pollEvery = 10 * time.Millisecond

// Eventually checks cond until it holds or timeout passes, and reports
// whether it held. A caller that can say more than "timed out" ignores the
// result and checks the state cond left behind, so a failure shows the
// real values.
func Eventually(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
	return true
}
