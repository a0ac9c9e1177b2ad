package server

import (
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"

	"github.com/truckjobs/jobboard/gateway"
	"github.com/truckjobs/jobboard/server/store"
)

// testOutbox is an outbox over st whose queue client only inserts, as the
// CLI's does.
func testOutbox(t testing.TB, st *store.Store) *Outbox {
	t.Helper()
	queue, err := river.NewClient(riverdatabasesql.New(st.DB().DB), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ob, err := NewOutbox(queue, gateway.RenderJSON)
	if err != nil {
		t.Fatal(err)
	}
	return ob
}

// TestDataMember: the data member of an answer is found wherever it is
// among the answer's members, byte for byte, and never inside another.
func TestDataMember(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"first", `{"data":{"id" : "a","n":[1, 2]},"links":{}}`, `{"id" : "a","n":[1, 2]}`},
		{"after another", `{"links":{"data":"no"},"data":"é\u00e9"}`, `"é\u00e9"`},
		{"missing", `{"links":{"data":"no"}}`, ""},
		{"not an object", `["data"]`, ""},
		{"cut short", `{"data":{"id":`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := dataMember([]byte(tt.body))
			if string(got) != tt.want || (err == nil) != (tt.want != "") {
				t.Errorf("dataMember(%s) = %s, %v; want %s", tt.body, got, err, tt.want)
			}
		})
	}
}
