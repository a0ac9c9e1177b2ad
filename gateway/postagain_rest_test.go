package gateway_test

import (
	"io"
	"strings"
	"testing"
)

// TestPostSentAgain: a feed posted again as it was is answered unchanged,
// job by job as when it was checked: a value ignored the first time is
// reported again, a reference repeated within the post is still refused,
// and a job whose stored content a write without the post's input
// changed since (a replica of an earlier release) is updated back.
func TestPostSentAgain(t *testing.T) {
	a := newAPI(t)
	withExtra := append(append(doc{}, minimalJob...), field{"bonus", "$5,000"})
	withExtra[0] = field{"referenceNumber", "EXTRA1"}
	feed := encodeJobs("json", []doc{fullJob, minimalJob, markupJob, withExtra})
	post := func(body string) string {
		t.Helper()
		resp := a.do("POST", "/api/v2.0/jobs.json", body)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		return string(b)
	}
	first := post(feed)
	const ignored = `"ignoredValues":[{"index":3,"referenceNumber":"EXTRA1","field":"bonus","value":"$5,000",` +
		`"message":"unknown field bonus was ignored"}]`
	again := `{"unchanged":4,"updated":0,"added":0,"deleted":0,"errors":0,"errorMessages":{"missingErrors":{"errors":[]},` +
		`"invalidErrors":{"errors":[]},"duplicationErrors":{"errors":[]},"limitErrors":{"errors":[]}},` + ignored + `}`
	for round := range 2 {
		if got := strings.TrimSpace(post(feed)); got != again {
			t.Errorf("posted again (%d):\n%s\nwant\n%s\n(first: %s)", round+1, got, again, first)
		}
	}
	var digests int
	if err := a.store.DB().Get(&digests, `SELECT count(input_digest) FROM jobs WHERE account_id = $1`, a.acct); err != nil {
		t.Fatal(err)
	}
	if digests != 3 {
		t.Errorf("%d jobs stored with their input's digest, want 3 (not the one with an ignored value)", digests)
	}

	repeated := encodeJobs("json", []doc{minimalJob, minimalJob})
	if got, want := post(repeated), `"unchanged":1,`; !strings.Contains(got, want) || !strings.Contains(got, `"duplicationErrors":{"errors":[{"index":1,`) {
		t.Errorf("a repeated reference: %s", got)
	}

	if _, err := a.store.DB().Exec(`UPDATE jobs SET title = 'Changed elsewhere', updated_at = now()
		 WHERE account_id = $1 AND reference_number = 'MIN1'`, a.acct); err != nil {
		t.Fatal(err)
	}
	if got := post(feed); !strings.Contains(got, `"unchanged":3,"updated":1,`) {
		t.Errorf("a job changed elsewhere, posted again: %s", got)
	}
	var title string
	if err := a.store.DB().Get(&title, `SELECT title FROM jobs WHERE account_id = $1 AND reference_number = 'MIN1'`, a.acct); err != nil {
		t.Fatal(err)
	}
	if title != "Yard Spotter" {
		t.Errorf("title %q after the post, want the posted one", title)
	}
}
