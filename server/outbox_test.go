package server

import (
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"

	"github.com/truckjobs/jobboard/gateway/render"
	"github.com/truckjobs/jobboard/server/leads"
	"github.com/truckjobs/jobboard/server/store"
)

// testOutbox is an outbox over st whose queue client only inserts, as the
// CLI's does.
func testOutbox(t testing.TB, st *store.Store) *leads.Outbox {
	t.Helper()
	queue, err := river.NewClient(riverdatabasesql.New(st.DB().DB), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ob, err := leads.NewOutbox(queue, render.JSON)
	if err != nil {
		t.Fatal(err)
	}
	return ob
}
