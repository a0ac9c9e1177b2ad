package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// peakRSS is the most memory the process has held, in bytes (VmHWM).
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// stop ends the service with SIGTERM and waits for it.
func (s *service) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	_ = s.cmd.Wait()
}

// TestMemoryStaysBounded measures the server's peak memory (docs/api.md,
// Limits against abuse): eight lists at once of 200 jobs of the largest size (about
// 80 MB of JSON each; a list was once built whole, and eight took the
// server to 2.85 GB), and a post whose one field holds 10,000 wrong values
// (once answered with 118 MB, using 370 MB).
func TestMemoryStaysBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("posts 80 MB of jobs")
	}
	const limit = 300 << 20
	env := migratedEnv(t, "JOBBOARD_RATE_LIMIT=0")
	acct := createAccount(t, env, "Large jobs")

	// 50,000 characters of four bytes each, in both rich-text fields.
	text := strings.Repeat("\U0001D400", 50_000)
	svc := startService(t, env)
	for post := range 8 {
		var jobs []string
		for i := range 25 {
			jobs = append(jobs, fmt.Sprintf(`{"referenceNumber":"BIG%d","title":"T","state":"TX","driverType":"Student","freightType":"Box","description":"%s","requirements":"%s"}`,
				post*25+i, text, text))
		}
		code, _, body := svc.request("basic", acct.APIKey, "POST", "/api/v2.0/jobs.json", "["+strings.Join(jobs, ",")+"]")
		if code != 200 || !strings.Contains(body, `"added":25`) {
			t.Fatalf("post %d: %d %.300s", post, code, body)
		}
	}
	svc.stop()

	t.Run("eight lists of 80 MB at once", func(t *testing.T) {
		svc := startService(t, env)
		defer svc.stop()
		var wg sync.WaitGroup
		sizes := make([]int64, 8)
		for i := range sizes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				path := "/api/v2.0/jobs.json"
				if i%2 == 1 {
					path = "/api/v2.0/jobs.xml"
				}
				req, _ := http.NewRequest("GET", svc.httpBase+path, nil)
				req.SetBasicAuth(acct.APIKey, "")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				defer resp.Body.Close()
				sizes[i], err = io.Copy(io.Discard, resp.Body)
				if err != nil || resp.StatusCode != 200 {
					t.Errorf("list %d: %d %v", i, resp.StatusCode, err)
				}
			}()
		}
		wg.Wait()
		peak := peakRSS(t, svc.cmd.Process.Pid)
		t.Logf("figures: 8 lists of %d bytes (JSON) and %d bytes (XML); server peak RSS %d MB", sizes[0], sizes[1], peak>>20)
		if sizes[0] < 200*400_000 {
			t.Errorf("a list of %d bytes is short of 200 jobs", sizes[0])
		}
		if peak > limit {
			t.Errorf("server peak RSS %d MB, more than %d MB", peak>>20, limit>>20)
		}
	})

	// Over gRPC the same jobs come in pages a client with gRPC's default
	// 4 MiB receive limit reads (docs/api.md, Jobs).
	t.Run("gRPC pages under 4 MiB", func(t *testing.T) {
		svc := startService(t, env)
		defer svc.stop()
		client := jobboardv2.NewJobServiceClient(svc.grpcConn())
		req := &jobboardv2.ListJobsRequest{PageSize: 1000}
		seen, pages := 0, 0
		for {
			page, err := client.ListJobs(withKey(acct.APIKey), req)
			if err != nil {
				t.Fatalf("page %d: %v", pages+1, err)
			}
			if size := proto.Size(page); size > 4<<20 {
				t.Errorf("page %d is %d bytes", pages+1, size)
			}
			seen += len(page.GetJobs())
			pages++
			if page.GetNextPageToken() == "" || pages > 200 {
				break
			}
			req.PageToken = page.GetNextPageToken()
		}
		t.Logf("figures: 200 jobs of 400 KB over gRPC in %d pages", pages)
		if seen != 200 {
			t.Errorf("%d jobs read over gRPC, want 200", seen)
		}
		if _, err := client.ListJobs(withKey(acct.APIKey), &jobboardv2.ListJobsRequest{PageToken: "abc"}); status.Code(err) != codes.InvalidArgument {
			t.Errorf("a page token not answered by the service: %v", err)
		}
	})

	t.Run("a post of 10,000 wrong values", func(t *testing.T) {
		svc := startService(t, env)
		defer svc.stop()
		ref := strings.Repeat("R", 1024)
		body := `[{"referenceNumber":"` + ref + `","employmentType":[` + strings.Repeat(`"Gig",`, 40_000) + `"Gig"]}]`
		code, _, answer := svc.request("basic", acct.APIKey, "POST", "/api/v2.0/jobs.json", body)
		peak := peakRSS(t, svc.cmd.Process.Pid)
		t.Logf("figures: a %d-byte post answered %d with %d bytes; server peak RSS %d MB", len(body), code, len(answer), peak>>20)
		if code != 200 || len(answer) > 10*len(body) || peak > limit {
			t.Errorf("answer %d bytes to a %d-byte post; peak RSS %d MB", len(answer), len(body), peak>>20)
		}
	})
}
