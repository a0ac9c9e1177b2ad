package topology

import (
	"context"
	"fmt"
	"time"
)

// awaitAlert waits until the topology's Prometheus fires the alert name
// for some series whose labels include labels (firing true), or fires it
// for none of them (firing false), and says when it saw that.
func awaitAlert(name string, labels map[string]string, firing bool, limit time.Duration) (time.Time, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var last error
	for {
		alerts, err := Alerts(ctx)
		if err == nil && firingFor(alerts, name, labels) == firing {
			return time.Now(), nil
		}
		last = err
		select {
		case <-ctx.Done():
			want := "firing"
			if !firing {
				want = "resolved"
			}
			return time.Time{}, fmt.Errorf("%s %v not %s after %v (%v)", name, labels, want, limit, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// firingFor says whether one of alerts is name firing with labels.
func firingFor(alerts []Alert, name string, labels map[string]string) bool {
	for _, a := range alerts {
		if a.Labels["alertname"] != name || a.State != "firing" {
			continue
		}
		match := true
		for k, v := range labels {
			match = match && a.Labels[k] == v
		}
		if match {
			return true
		}
	}
	return false
}

// alertWatch notes when the topology's Prometheus was first seen firing an
// alert, polling from the moment it is made, so a scenario busy with
// other checks meanwhile still gets the time the alert fired.
type alertWatch struct {
	done  chan struct{}
	fired time.Time
	err   error
}

// watchAlert starts watching for name firing with labels, for at most
// limit.
func watchAlert(name string, labels map[string]string, limit time.Duration) *alertWatch {
	w := &alertWatch{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		w.fired, w.err = awaitAlert(name, labels, true, limit)
	}()
	return w
}

// firedAt waits for the watch's end and says when the alert fired.
func (w *alertWatch) firedAt() (time.Time, error) {
	<-w.done
	return w.fired, w.err
}
