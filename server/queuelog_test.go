package server

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/gateway/render"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// TestQueueLogExplainsPolling builds the real queue and reads what River
// logs at start: the poll-only notice comes out in the service's words and
// every queue line carries component=queue.
func TestQueueLogExplainsPolling(t *testing.T) {
	var logs bytes.Buffer
	previous := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(previous) })

	st := storetest.Store(t)
	if _, err := NewServices(st, Config{RenderCallback: render.JSON}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), riverPollOnlyNotice) {
		t.Errorf("River's notice passed through unexplained:\n%s", logs.String())
	}
	var found bool
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		// The call log counts refused calls of one reason in a line a
		// second after them, through the default logger of that moment:
		// calls an earlier test refused (the search's callers) can land
		// here, whatever handler they were refused under.
		if strings.Contains(line, "refused_calls") {
			continue
		}
		if rec["component"] != "queue" {
			t.Errorf("queue log line without component=queue: %s", line)
		}
		if msg, _ := rec["msg"].(string); strings.Contains(msg, "every 200ms") && strings.Contains(msg, "PgBouncer") {
			found = true
		}
	}
	if !found {
		t.Errorf("no line says how the queue finds new work:\n%s", logs.String())
	}
}

// TestQueueLogPassesOtherLines: anything but the notice is left as River
// wrote it.
func TestQueueLogPassesOtherLines(t *testing.T) {
	var logs bytes.Buffer
	logger := newQueueLogger(slog.NewJSONHandler(&logs, nil), queuePollInterval).With("job_id", 7)
	logger.Info("River client started", "client_id", "c1")
	for _, want := range []string{`"msg":"River client started"`, `"component":"queue"`, `"job_id":7`, `"client_id":"c1"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("missing %s in %s", want, logs.String())
		}
	}
}
