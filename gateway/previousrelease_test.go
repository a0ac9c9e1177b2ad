package gateway_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/gateway"
	"github.com/truckjobs/jobboard/gateway/render"
	"github.com/truckjobs/jobboard/internal/pglocal"
	"github.com/truckjobs/jobboard/server"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

// previousRelease holds a database an earlier release wrote through its
// own API and commands, dumped, with the answers that release gave about
// it: scripts/previous-release-data.sh makes it (testdata/previous-release/commit
// names the release).
const previousRelease = "testdata/previous-release"

// TestPreviousReleaseData: the stored data of the previous release, restored
// and migrated by this one, answers the same REST requests with the same
// bytes: jobs, drivers, an import's results, events, webhook endpoints and
// their deliveries, in JSON and XML. A release that changes an answer on
// purpose makes the data again from the release before it.
func TestPreviousReleaseData(t *testing.T) {
	ctx := context.Background()
	url := storetest.EmptyURL(t)
	restoreDump(t, url, filepath.Join(previousRelease, "dump.sql.gz"))
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	applied, err := st.Migrate(ctx)
	if err != nil {
		t.Fatalf("migrate the previous release's database: %v", err)
	}
	t.Logf("migrations applied to the previous release's database: %v", applied)
	writtenAt, err := time.Parse(time.RFC3339, readLine(t, "written-at"))
	if err != nil {
		t.Fatal(err)
	}
	// The services answer in-process, without the queue's workers: nothing
	// is delivered, retried or cleaned up behind the answers; their clock
	// is the day the data was written.
	svcs, err := server.NewServices(st, server.Config{PublicURL: readLine(t, "public-url"), RenderCallback: render.JSON,
		Now: func() time.Time { return writtenAt }})
	if err != nil {
		t.Fatal(err)
	}
	h, err := gateway.New(ctx, gateway.Config{Jobs: svcs.Jobs, Drivers: svcs.Drivers, Imports: svcs.Imports,
		Webhooks: svcs.Webhooks, Events: svcs.Events, Authenticate: svcs.Auth.AuthenticateKey, Boundary: call.Boundary})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	key := readLine(t, "api-key")
	requests, err := os.ReadFile(filepath.Join(previousRelease, "requests"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(requests)), "\n")
	if len(lines) < 10 {
		t.Fatalf("%d requests in %s/requests", len(lines), previousRelease)
	}
	for _, line := range lines {
		name, path, _ := strings.Cut(line, " ")
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(previousRelease, "answers", name))
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v2.0/"+path, nil)
			req.SetBasicAuth(key, "")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || !bytes.Equal(got, want) {
				t.Errorf("GET %s: %d\n%.600s\nthe previous release answered\n%.600s", path, resp.StatusCode, got, want)
			}
		})
	}
}

// restoreDump loads a pg_dump text dump, gzipped, into the database at url
// with psql, stopping at the first error.
func restoreDump(t *testing.T, url, dump string) {
	t.Helper()
	f, err := os.Open(dump)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sql, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	psql, err := pglocal.Binary("psql")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(psql, "--no-psqlrc", "--quiet", "--set", "ON_ERROR_STOP=1", "--dbname", url)
	cmd.Stdin = sql
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("restore %s: %v\n%s", dump, err, out)
	}
}

// readLine is the one line of a file of the previous release's data.
func readLine(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(previousRelease, name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
