package leads

import (
	"fmt"
	"testing"
	"time"
)

// shareStep is one step of a share table test: after the clock advances,
// either a delivery to endpoint of account asks for a place (refused, it
// must be told to wait wait) or the delivery granted at step finish ends.
type shareStep struct {
	advance  time.Duration
	account  int64
	endpoint string
	refused  bool
	wait     time.Duration
	// finish, when not 0, ends the delivery granted at that step (1-based)
	// instead of asking for a place.
	finish int
}

// many is n steps asking for places for endpoint of account, all granted.
func many(n int, account int64, endpoint string) []shareStep {
	steps := make([]shareStep, n)
	for i := range steps {
		steps[i] = shareStep{account: account, endpoint: endpoint}
	}
	return steps
}

func concat(parts ...[]shareStep) []shareStep {
	var out []shareStep
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestDeliveryShares(t *testing.T) {
	for _, c := range []struct {
		name    string
		workers int
		steps   []shareStep
	}{{
		name: "an endpoint has at most 4 in flight; the 5th waits for a quarter of a typical delivery", workers: 20,
		steps: concat(many(4, 1, "e1"), []shareStep{{account: 1, endpoint: "e1", refused: true, wait: 250 * time.Millisecond}}),
	}, {
		name: "refused deliveries are given turns one after the other", workers: 20,
		steps: concat(many(4, 1, "e1"), []shareStep{
			{account: 1, endpoint: "e1", refused: true, wait: 250 * time.Millisecond},
			{account: 1, endpoint: "e1", refused: true, wait: 500 * time.Millisecond},
			{advance: 400 * time.Millisecond, account: 1, endpoint: "e1", refused: true, wait: 350 * time.Millisecond},
			// Turns already past count from now.
			{advance: 2 * time.Second, account: 1, endpoint: "e1", refused: true, wait: 250 * time.Millisecond},
		}),
	}, {
		name: "an account has at most half the workers, over all its endpoints", workers: 20,
		steps: concat(many(4, 1, "e1"), many(4, 1, "e2"), many(2, 1, "e3"), []shareStep{
			// A typical second over 10 places is 100 ms, the shortest wait.
			{account: 1, endpoint: "e3", refused: true, wait: 100 * time.Millisecond},
			{account: 1, endpoint: "e4", refused: true, wait: 200 * time.Millisecond},
		}),
	}, {
		name: "another account is not held up by a full one", workers: 20,
		steps: concat(many(4, 1, "e1"), many(4, 1, "e2"), many(2, 1, "e3"),
			[]shareStep{{account: 1, endpoint: "e3", refused: true, wait: 100 * time.Millisecond}},
			many(4, 2, "f1"), many(4, 2, "f2"), many(2, 2, "f3")),
	}, {
		name: "a finished delivery frees its place and teaches how long deliveries take", workers: 20,
		steps: concat(many(4, 1, "e1"), []shareStep{
			{advance: 9 * time.Second, finish: 1},
			{account: 1, endpoint: "e1"},
			// typical: 1 s + (9 s - 1 s)/4 = 3 s, over 4 places.
			{account: 1, endpoint: "e1", refused: true, wait: 750 * time.Millisecond},
		}),
	}, {
		name: "a wait is at most 30 s", workers: 20,
		steps: concat(many(4, 1, "e1"), []shareStep{
			{advance: 200 * time.Second, finish: 1}, {account: 1, endpoint: "e1"},
			// typical: 1 s + 199 s/4 = 50.75 s; 12.69 s a place.
			{account: 1, endpoint: "e1", refused: true, wait: 12687500 * time.Microsecond},
			{account: 1, endpoint: "e1", refused: true, wait: 25375 * time.Millisecond},
			{account: 1, endpoint: "e1", refused: true, wait: 30 * time.Second},
			{account: 1, endpoint: "e1", refused: true, wait: 30 * time.Second},
		}),
	}, {
		name: "4 workers: 2 for an account, so 2 for an endpoint", workers: 4,
		steps: concat(many(2, 1, "e1"), []shareStep{
			{account: 1, endpoint: "e1", refused: true, wait: 500 * time.Millisecond},
			{account: 1, endpoint: "e2", refused: true, wait: 500 * time.Millisecond}}, many(2, 2, "f1")),
	}, {
		name: "1 worker: the account has it", workers: 1,
		steps: concat(many(1, 1, "e1"), []shareStep{{account: 1, endpoint: "e1", refused: true, wait: time.Second}},
			many(1, 2, "f1")),
	}} {
		t.Run(c.name, func(t *testing.T) {
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			s := newDeliveryShares(c.workers, func() time.Time { return now })
			granted := map[int]func(){}
			for i, st := range c.steps {
				now = now.Add(st.advance)
				step := fmt.Sprintf("step %d", i+1)
				if st.finish != 0 {
					granted[st.finish]()
					delete(granted, st.finish)
					continue
				}
				done, wait, ok := s.take(st.account, st.endpoint)
				if ok == st.refused || (st.refused && wait != st.wait) {
					t.Fatalf("%s (account %d, %s): granted %v, wait %s; want granted %v, wait %s",
						step, st.account, st.endpoint, ok, wait, !st.refused, st.wait)
				}
				if ok {
					granted[i+1] = done
				}
			}
			for _, done := range granted {
				done()
				done() // twice gives back one place
			}
			if len(s.endpoints) != 0 || len(s.accounts) != 0 {
				t.Errorf("with nothing in flight, %d endpoint and %d account shares are kept", len(s.endpoints), len(s.accounts))
			}
		})
	}
}
