package server

import (
	"context"
	"database/sql"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/gateway/render"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/imports"
)

// threeJobs is an import of three valid jobs with a callback to cb.
func threeJobs(cb string) *restv2.CreateJobImportRequest {
	return &restv2.CreateJobImportRequest{Jobs: []*restv2.JobInput{input("F1"), input("F2"), input("F3")},
		CallbackUrl: &cb, DeleteJobs: true}
}

// checkFailedImport checks the import ended as docs/api.md (Job imports) says an
// import that cannot be processed ends: every job failed, one error entry
// without a reference whose message contains want, nothing saved, and its
// callback delivered with the body GET gives.
func (f *importFixture) checkFailedImport(t *testing.T, imp *restv2.JobImport, jobs int32, want string, r *receiver) {
	t.Helper()
	res := imp.Results
	if res.Failed != jobs || res.Processed != jobs || res.Added+res.Updated+res.Unchanged+res.Deleted != 0 {
		t.Errorf("results %v, want %d failed and processed, nothing else", res, jobs)
	}
	if len(res.Errors) != 1 || res.Errors[0].ReferenceNumber != nil || len(res.Errors[0].Messages) != 1 ||
		!strings.Contains(res.Errors[0].Messages[0], want) {
		t.Fatalf("errors %v, want one entry without a reference saying %q", res.Errors, want)
	}
	if imp.CompletedAt == nil {
		t.Error("no completedAt")
	}
	list, err := f.svcs.Jobs.ListJobs(f.ctxA, &restv2.ListJobsRequest{})
	if err != nil || len(list.Jobs) != 0 {
		t.Errorf("jobs saved by a failed import: %v %v", list, err)
	}
	attempts := f.attempts(t, imp.Id, 1)
	if len(attempts) != 1 || attempts[0].StatusCode == nil || *attempts[0].StatusCode != http.StatusNoContent {
		t.Fatalf("callback attempts: %+v", attempts)
	}
	got, _ := f.svcs.Imports.GetJobImport(f.ctxA, &restv2.GetJobImportRequest{Id: imp.Id})
	retrieved, _ := render.JSON(got)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.bodies) != 1 || string(r.bodies[0]) != string(retrieved) {
		t.Errorf("callbacks %q, want one with the body of GET\n%s", r.bodies, retrieved)
	}
	if !strings.Contains(string(retrieved), `"referenceNumber":null`) {
		t.Errorf("the error entry's referenceNumber is not null: %s", retrieved)
	}
}

// TestImportGivenUpByItsWorker: an import whose every attempt fails ends
// complete with every job failed and its callback sent, instead of
// staying running for ever once the queue stops retrying.
func TestImportGivenUpByItsWorker(t *testing.T) {
	t.Run("every attempt runs past the timeout", func(t *testing.T) {
		f := newIdleImportFixture(t, func(c *Config) {
			c.ImportTimeout = 300 * time.Millisecond
			c.ImportAttempts = 2 // the first retry follows after about 1 s
		})
		f.start(t)
		r := newReceiver(t, http.StatusNoContent)
		// Another transaction holds the account as a long post would (the
		// lock a post takes, which lets the import itself be created):
		// each attempt waits for it until its timeout cancels it.
		db := f.st.DB()
		hold, err := db.BeginTx(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer hold.Rollback()
		caller, _ := call.From(f.ctxA)
		if _, err := hold.Exec(`SELECT id FROM accounts WHERE id = $1 FOR NO KEY UPDATE`, caller.AccountID); err != nil {
			t.Fatal(err)
		}
		imp := f.run(t, f.ctxA, threeJobs(r.srv.URL))
		f.checkFailedImport(t, imp, 3, "its last attempt (2 of 2) ran longer than the 300ms allowed", r)
		var state string
		var attempt int
		if err := db.QueryRow(`SELECT state, attempt FROM river_job WHERE kind = 'job_import'`).Scan(&state, &attempt); err != nil {
			t.Fatal(err)
		}
		if state != "completed" || attempt != 2 {
			t.Errorf("queue job %s after %d attempts, want completed after 2", state, attempt)
		}
		for status, want := range map[string]float64{"failed": 1, "gave_up": 1, "complete": 0} {
			if got := sample(t, f.metrics, "jobboard_job_imports_finished_total", map[string]string{"status": status}); got != want {
				t.Errorf("%v import runs counted %s, want %v", got, status, want)
			}
		}
	})
	// Two jobs whose stored form does not decode, in either form a payload
	// may have: the queue cancels such an import at once, and it must still end.
	for form, payload := range map[string][]byte{
		"proto": {0x0a, 0x02, 0xff, 0xff, 0x0a, 0x02, 0xff, 0xff},
		"json":  []byte(`{"jobs": [{"title": 7}, {"title": 8}]}`),
	} {
		t.Run("stored jobs unreadable, "+form, func(t *testing.T) {
			f := newIdleImportFixture(t, nil)
			r := newReceiver(t, http.StatusNoContent)
			created, err := f.svcs.Imports.CreateJobImport(f.ctxA, threeJobs(r.srv.URL))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.st.DB().Exec(`UPDATE job_imports SET payload = $2, payload_form = $3 WHERE id = $1`,
				created.Data.Id, payload, form); err != nil {
				t.Fatal(err)
			}
			f.start(t)
			imp := f.waitComplete(t, f.ctxA, created.Data.Id)
			f.checkFailedImport(t, imp, 2, "its stored jobs could not be read", r)
		})
	}
}

// strand makes the queue job of import id end as a rescue after its last
// attempt leaves it (discarded without running), or deletes it.
func strand(t *testing.T, db *sql.DB, id string, deleteJob bool) {
	t.Helper()
	q := `UPDATE river_job SET state = 'discarded', attempt = max_attempts, attempted_at = now(), finalized_at = now()
		WHERE kind = 'job_import' AND args->>'import_id' = $1`
	if deleteJob {
		q = `DELETE FROM river_job WHERE kind = 'job_import' AND args->>'import_id' = $1`
	}
	res, err := db.Exec(q, id)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("%d queue jobs for import %s, want 1", n, id)
	}
}

// TestImportSweep: the sweep completes, once, the imports the queue gave
// up on without their worker seeing it, and leaves the others alone.
func TestImportSweep(t *testing.T) {
	f := newIdleImportFixture(t, nil) // no worker: the queue jobs stay as the test sets them
	db := f.st.DB().DB
	cb := "http://127.0.0.1:9/cb"
	create := func() string {
		created, err := f.svcs.Imports.CreateJobImport(f.ctxA, threeJobs(cb))
		if err != nil {
			t.Fatal(err)
		}
		return created.Data.Id
	}
	discarded, deleted, waiting := create(), create(), create()
	strand(t, db, discarded, false)
	strand(t, db, deleted, true)
	for _, id := range []string{discarded, deleted} {
		// A running import whose worker died is as stranded as a pending one.
		if _, err := db.Exec(`UPDATE job_imports SET status = 'running' WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
	}
	// Sweeps on several replicas at once complete each import once.
	var wg sync.WaitGroup
	done := make([]int, 4)
	for i := range done {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := f.svcs.SweepImports(context.Background())
			if err != nil {
				t.Error(err)
			}
			done[i] = n
		}()
	}
	wg.Wait()
	if total := done[0] + done[1] + done[2] + done[3]; total != 2 {
		t.Errorf("sweeps completed %v imports, want 2 in all", done)
	}
	tests := []struct {
		name, id, status, message string
	}{
		{"job discarded after its last attempt", discarded, "complete", "the queue stopped trying after 8 attempts (its job was discarded)"},
		{"job row deleted", deleted, "complete", "its queue job no longer exists"},
		{"job still waiting", waiting, "pending", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.svcs.Imports.GetJobImport(f.ctxA, &restv2.GetJobImportRequest{Id: tt.id})
			if err != nil {
				t.Fatal(err)
			}
			if got.Data.Status != tt.status {
				t.Fatalf("status %s, want %s", got.Data.Status, tt.status)
			}
			var callbacks, events int
			if err := db.QueryRow(`SELECT count(*) FROM river_job WHERE kind = 'job_import_callback' AND args->>'import_id' = $1`, tt.id).Scan(&callbacks); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRow(`SELECT count(*) FROM events WHERE type = 'job_import.completed' AND data->>'id' = $1`, tt.id).Scan(&events); err != nil {
				t.Fatal(err)
			}
			if tt.message == "" {
				if got.Data.Results != nil || callbacks != 0 || events != 0 {
					t.Errorf("an import the queue still holds was touched: %v, %d callbacks, %d events", got.Data, callbacks, events)
				}
				return
			}
			if events != 1 {
				t.Errorf("%d job_import.completed events, want 1", events)
			}
			r := got.Data.Results
			if r.Failed != 3 || r.Processed != 3 || len(r.Errors) != 1 || r.Errors[0].ReferenceNumber != nil ||
				r.Errors[0].Messages[0] != imports.NotProcessed+tt.message {
				t.Errorf("results %v, want 3 failed with the message %q", r, tt.message)
			}
			if callbacks != 1 {
				t.Errorf("%d callbacks queued, want 1", callbacks)
			}
		})
	}
	if got := sample(t, f.metrics, "jobboard_job_imports_finished_total", map[string]string{"status": "gave_up"}); got != 2 {
		t.Errorf("%v imports counted gave_up, want 2", got)
	}
}

// TestImportSweepRunsInTheQueue: the queue runs the sweep by itself, and
// the import it completes has its callback delivered.
func TestImportSweepRunsInTheQueue(t *testing.T) {
	f := newIdleImportFixture(t, func(c *Config) { c.SweepImportsEvery = 200 * time.Millisecond })
	r := newReceiver(t, http.StatusNoContent)
	created, err := f.svcs.Imports.CreateJobImport(f.ctxA, threeJobs(r.srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	strand(t, f.st.DB().DB, created.Data.Id, false)
	f.start(t)
	imp := f.waitComplete(t, f.ctxA, created.Data.Id)
	f.checkFailedImport(t, imp, 3, "the queue stopped trying after 8 attempts", r)
}
