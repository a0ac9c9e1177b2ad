package topology

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

// An outcome is one request of the load: what it was, how it ended, which
// replica answered (HAProxy's X-Served-By) and when.
type outcome struct {
	op      string
	ok      bool
	status  string // HTTP status or gRPC code
	reason  string // a failure's body or transport error, shortened
	replica string
	start   time.Time
	took    time.Duration
}

// recorder keeps every outcome of a run, so a failure is never hidden in
// a rate: each is counted with its status and reason.
type recorder struct {
	mu       sync.Mutex
	outcomes []outcome
}

func (r *recorder) add(o outcome) {
	r.mu.Lock()
	r.outcomes = append(r.outcomes, o)
	r.mu.Unlock()
}

func (r *recorder) snapshot() []outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]outcome(nil), r.outcomes...)
}

// account is one employer account of the load.
type account struct {
	ID     int64  `json:"id"`
	APIKey string `json:"apiKey"`
}

// load sends a mixed load through HAProxy at a fixed rate until stopped:
// REST reads of the jobs and drivers lists, gRPC job lists, posts of a few
// jobs, and imports with a callback, from several accounts.
type load struct {
	accounts []account
	rate     int // requests a second
	workers  int
	callback string // the receiver's URL
	rec      *recorder
	http     *http.Client
	grpc     jobboardv2.JobServiceClient
	// imports are the ids of the imports accepted (202), by account.
	importsMu sync.Mutex
	imports   map[string]int64
	// skipped counts ticks with every worker busy: the generator, not the
	// service, would then set the pace.
	skipped atomic.Int64
	seq     atomic.Int64
}

func newLoad(t *testing.T, accounts []account, rate, workers int, callback string) *load {
	conn, err := grpc.NewClient(GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &load{accounts: accounts, rate: rate, workers: workers, callback: callback, rec: &recorder{},
		http: &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}},
		grpc: jobboardv2.NewJobServiceClient(conn), imports: map[string]int64{}}
}

// run sends the load until ctx ends, then waits for the requests in flight.
func (l *load) run(ctx context.Context) {
	work := make(chan struct{})
	var wg sync.WaitGroup
	for range l.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				l.one()
			}
		}()
	}
	tick := time.NewTicker(time.Second / time.Duration(l.rate))
	defer tick.Stop()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
			select {
			case work <- struct{}{}:
			default:
				l.skipped.Add(1)
			}
		}
	}
	close(work)
	wg.Wait()
}

// one sends one request of the mix: 40% REST job lists, 20% drivers lists,
// 15% gRPC job lists, 20% posts of 5 jobs, 5% imports of 20 jobs.
func (l *load) one() {
	acct := l.accounts[rand.IntN(len(l.accounts))]
	switch n := rand.IntN(100); {
	case n < 40:
		l.rest("list jobs", acct, "GET", "/api/v2.0/jobs.json", "")
	case n < 60:
		l.rest("list drivers", acct, "GET", "/api/v2.0/drivers.json?max=20", "")
	case n < 75:
		l.grpcList(acct)
	case n < 95:
		l.rest("post jobs", acct, "POST", "/api/v2.0/jobs.json", jobsJSON(5, 100))
	default:
		l.postImport(acct)
	}
}

// jobsJSON is n jobs whose references come from a set of size refs, so
// that posts update as well as add, and the lists stay bounded.
func jobsJSON(n, refs int) string {
	jobs := make([]string, n)
	for i := range jobs {
		jobs[i] = fmt.Sprintf(`{"referenceNumber":"L%d","title":"Regional Driver %d","state":"OH","driverType":"Company Driver","freightType":"Dry Van","description":"<p>Load test.</p>"}`,
			rand.IntN(refs), rand.IntN(1000))
	}
	return "[" + strings.Join(jobs, ",") + "]"
}

func (l *load) postImport(acct account) {
	body := fmt.Sprintf(`{"jobs":%s,"callbackUrl":%q}`, jobsJSON(20, 100), l.callback)
	answer, ok := l.rest("import", acct, "POST", "/api/v2.0/job-imports", body)
	if !ok {
		return
	}
	var created struct {
		Data struct{ ID string } `json:"data"`
	}
	if err := json.Unmarshal(answer, &created); err == nil && created.Data.ID != "" {
		l.importsMu.Lock()
		l.imports[created.Data.ID] = acct.ID
		l.importsMu.Unlock()
	}
}

// rest sends one REST request and records it; a 2xx is a success.
func (l *load) rest(op string, acct account, method, path, body string) ([]byte, bool) {
	req, _ := http.NewRequest(method, RESTURL()+path, strings.NewReader(body))
	req.SetBasicAuth(acct.APIKey, "")
	if op == "import" {
		req.Header.Set("Idempotency-Key", fmt.Sprintf("load-%d-%d", time.Now().UnixNano(), l.seq.Add(1)))
	}
	start := time.Now()
	resp, err := l.http.Do(req)
	o := outcome{op: op, start: start}
	if err != nil {
		o.took, o.status, o.reason = time.Since(start), "transport", shorten(err.Error())
		l.rec.add(o)
		return nil, false
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	o.took, o.replica, o.status = time.Since(start), resp.Header.Get("X-Served-By"), fmt.Sprint(resp.StatusCode)
	o.ok = err == nil && resp.StatusCode/100 == 2
	if !o.ok {
		o.reason = shorten(string(answer))
		if err != nil {
			o.reason = shorten(err.Error())
		}
	}
	l.rec.add(o)
	return answer, o.ok
}

func (l *load) grpcList(acct account) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+acct.APIKey)
	var header metadata.MD
	start := time.Now()
	_, err := l.grpc.ListJobs(ctx, &jobboardv2.ListJobsRequest{PageSize: 50}, grpc.Header(&header))
	o := outcome{op: "grpc list jobs", start: start, took: time.Since(start), ok: err == nil, status: status.Code(err).String()}
	if served := header.Get("x-served-by"); len(served) > 0 {
		o.replica = served[0]
	}
	if err != nil {
		o.reason = shorten(status.Convert(err).Message())
	}
	l.rec.add(o)
}

func shorten(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

// importIDs are the accepted imports so far.
func (l *load) importIDs() []string {
	l.importsMu.Lock()
	defer l.importsMu.Unlock()
	ids := make([]string, 0, len(l.imports))
	for id := range l.imports {
		ids = append(ids, id)
	}
	return ids
}

// summary is a run's figures: counts, failures by status and reason,
// latencies, the answers of each replica, and what the generator spent.
type summary struct {
	total, failed int
	failures      map[string]int // "op status reason" -> count
	byReplica     map[string]int
	p50, p99, max time.Duration
	rate          float64
}

func summarize(outs []outcome, d time.Duration) summary {
	s := summary{total: len(outs), failures: map[string]int{}, byReplica: map[string]int{}}
	var took []time.Duration
	for _, o := range outs {
		took = append(took, o.took)
		if o.replica != "" {
			s.byReplica[strings.TrimPrefix(o.replica, "jobboard-topology-")]++
		}
		if !o.ok {
			s.failed++
			s.failures[o.op+" "+o.status+" "+o.reason]++
		}
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	if n := len(took); n > 0 {
		s.p50, s.p99, s.max = took[n/2], took[n*99/100], took[n-1]
	}
	s.rate = float64(s.total) / d.Seconds()
	return s
}

func (s summary) String() string {
	var fails []string
	for k, n := range s.failures {
		fails = append(fails, fmt.Sprintf("%d x %s", n, k))
	}
	sort.Strings(fails)
	return fmt.Sprintf("%d requests (%.0f/s), %d failed%s; latency p50 %v p99 %v max %v; answered by replica %v",
		s.total, s.rate, s.failed, bracket(fails), s.p50.Round(time.Millisecond), s.p99.Round(time.Millisecond),
		s.max.Round(time.Millisecond), s.byReplica)
}

func bracket(items []string) string {
	if len(items) == 0 {
		return ""
	}
	return " [" + strings.Join(items, "; ") + "]"
}

// cpuTime is this process's CPU time so far: the generator's cost.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
