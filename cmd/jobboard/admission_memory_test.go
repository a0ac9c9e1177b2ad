package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/truckjobs/jobboard/server/store"
)

// lockJobs holds an exclusive lock on the jobs table until the test ends
// (or the returned function is called), so a request that reads jobs
// cannot finish.
func lockJobs(t *testing.T, env []string) (unlock func()) {
	t.Helper()
	st, err := store.Open(context.Background(), strings.TrimPrefix(env[0], "DATABASE_URL="))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tx, err := st.DB().BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	if _, err := tx.Exec(`LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	return func() { _ = tx.Rollback() }
}

// residentMiB is a process's resident memory now and at its peak, in MiB.
func residentMiB(t *testing.T, pid int) (now, peak int) {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc to read the server's memory from: %v", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		name, value, _ := strings.Cut(line, ":")
		kib, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(value), " kB"))
		switch name {
		case "VmRSS":
			now = kib >> 10
		case "VmHWM":
			peak = kib >> 10
		}
	}
	return now, peak
}

// TestWaitingPostsHoldNoBody: with one place, taken by a request the test
// keeps from finishing, 24 posts of 8 MiB wait in line; the server reads
// none of their bodies while they wait, so its memory does not grow by
// the 192 MiB they would hold. The clients then leave.
func TestWaitingPostsHoldNoBody(t *testing.T) {
	env := migratedEnv(t)
	a := createAccount(t, env, "Poster")
	svc := startService(t, append(env, "JOBBOARD_MAX_IN_FLIGHT=1", "JOBBOARD_ADMISSION_QUEUE=64", "JOBBOARD_ADMISSION_WAIT=1m"))
	if code, _, body := svc.request("basic", a.APIKey, "POST", "/api/v2.0/jobs.json", twoJobs); code != 200 {
		t.Fatalf("posting before the overload: %d %s", code, body)
	}
	unlock := lockJobs(t, env)
	done := make(chan answer, 32)
	sendAsync(svc, done, "the request at work", a.APIKey, "GET", "/api/v2.0/jobs.json", "")
	waitGauge(t, svc, "in_progress", 1)
	before, _ := residentMiB(t, svc.cmd.Process.Pid)

	const posts, bodyMiB = 24, 8
	body := "[" + strings.Repeat(" ", bodyMiB<<20) + "]"
	ctx, leave := context.WithCancel(context.Background())
	defer leave()
	for range posts {
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "POST", svc.httpBase+"/api/v2.0/jobs.json", strings.NewReader(body))
			req.SetBasicAuth(a.APIKey, "")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	waitGauge(t, svc, "queued", posts)
	time.Sleep(time.Second) // time for the bodies to arrive, were they read
	after, peak := residentMiB(t, svc.cmd.Process.Pid)
	t.Logf("server resident memory: %d MiB before the posts, %d MiB with %d posts of %d MiB waiting (peak %d MiB)",
		before, after, posts, bodyMiB, peak)
	if grew := after - before; grew > 3*bodyMiB {
		t.Errorf("the server grew by %d MiB with %d posts of %d MiB waiting, want at most %d MiB: the waiting requests hold their bodies",
			grew, posts, bodyMiB, 3*bodyMiB)
	}
	// Over HTTP/1.1 the server learns that a waiting client left only
	// when it reads the body: once the lock goes, each gets its place in
	// turn and finds the connection closed.
	leave()
	unlock()
	waitGauge(t, svc, "queued", 0)
	waitGauge(t, svc, "in_progress", 0)
}

// TestSlowReaderHoldsNoPlace: two clients of one account ask for a jobs
// list of about 8 MiB and read none of it. Each request gives its place
// back once the list is read from the database, before the answer that
// fills the sockets is written, so nothing is left in progress while they
// do not read, and another account is served at once.
func TestSlowReaderHoldsNoPlace(t *testing.T) {
	env := migratedEnv(t)
	a := createAccount(t, env, "Slow reader")
	b := createAccount(t, env, "Neighbour")
	svc := startService(t, append(env, "JOBBOARD_MAX_IN_FLIGHT=2", "JOBBOARD_ADMISSION_WAIT=3s"))
	postLargeJobs(t, svc, a.APIKey, 1000, 8<<10)
	for range 2 {
		conn, err := net.Dial("tcp", strings.TrimPrefix(svc.httpBase, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// A small receive buffer: the server's writes stop after a few MiB.
		_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
		auth := base64.StdEncoding.EncodeToString([]byte(a.APIKey + ":"))
		fmt.Fprintf(conn, "GET /api/v2.0/jobs.json HTTP/1.1\r\nHost: test\r\nAuthorization: Basic %s\r\n\r\n", auth)
	}
	waitGauge(t, svc, "in_progress", 0)
	started := time.Now()
	if code, _, body := svc.request("basic", b.APIKey, "GET", "/api/v2.0/jobs.json", ""); code != 200 {
		t.Errorf("another account while a's clients read nothing: %d %s", code, body)
	}
	if took := time.Since(started); took > time.Second {
		t.Errorf("another account's request took %s, want it served at once", took)
	}
}

// postLargeJobs posts n jobs with descriptions of size bytes.
func postLargeJobs(t *testing.T, svc *service, key string, n, size int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("[")
	description := strings.Repeat("Hauling dry freight. ", size/21)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"referenceNumber":"L%d","title":"Regional Driver","state":"TX","driverType":"Company Driver","freightType":"Dry Van","description":%q}`, i, description)
	}
	b.WriteString("]")
	code, _, body := svc.request("basic", key, "POST", "/api/v2.0/jobs.json", b.String())
	if code != 200 || !strings.Contains(body, fmt.Sprintf(`"added":%d`, n)) {
		t.Fatalf("posting %d large jobs: %d %.300s", n, code, body)
	}
}
