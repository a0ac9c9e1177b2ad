package gateway

import "time"

// SetBodyArrival shortens how long a body may take to arrive, for a test;
// the returned function restores it.
func SetBodyArrival(d time.Duration) (restore func()) {
	was := bodyArrival
	bodyArrival = d
	return func() { bodyArrival = was }
}
