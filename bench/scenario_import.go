package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

func init() {
	register(5, "job imports of 10,000 and of 50,000 jobs", importScenario)
	register(6, "import completion to callback", callbackScenario)
}

// importScenario times a job import of 10,000 new jobs from the POST to
// "complete" seen by polling, against the same jobs sent as ten posts of
// 1,000, and watches the server's peak memory over the imports; then the
// largest import there is, of 50,000 jobs (largeImport).
func importScenario(ctx context.Context, h *harness) ([]result, error) {
	a, err := h.newAccount(ctx, "Bench Importer")
	if err != nil {
		return nil, err
	}
	n := 10_000
	rounds := max(1, h.opts.rounds/3)
	withdraw := func(int) error { return h.withdrawAll(ctx, a) }
	posts, err := repeat(rounds, withdraw, func(r int) error {
		for start := 0; start < n; start += 1000 {
			if err := h.postJobs(ctx, a, jobsJSON(start, 1000, fmt.Sprintf("P%dR", r+1), "Driver")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	base := h.server.resetPeak()
	imports, err := repeat(rounds, withdraw, func(r int) error {
		body := importBody(jobsJSON(0, n, fmt.Sprintf("I%dR", r+1), "Driver"), "")
		imp, err := h.createImport(ctx, a, body)
		if err != nil {
			return err
		}
		done, err := h.waitImport(ctx, a, imp, 5*time.Millisecond)
		if err == nil && done.Data.Results.Added != n {
			err = fmt.Errorf("import added %d jobs, want %d", done.Data.Results.Added, n)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	_, peak := h.server.memory()
	growth := float64(peak-base) / (1 << 20)
	p, i := summarize(posts), summarize(imports)
	ratio := float64(i.median) / float64(p.median)
	large, err := largeImport(ctx, h)
	if err != nil {
		return nil, err
	}
	return []result{{
		name:   fmt.Sprintf("import of %d new jobs, POST to complete (%d rounds)", n, i.n),
		median: i.median, p99: i.p99,
		floor: fmt.Sprintf("ten posts of 1,000: %s", ms(p.median)),
		ratio: ratio, target: "<= 1.5x ten posts; memory growth < 200 MB",
		pass: ratio <= 1.5 && growth < 200,
		note: fmt.Sprintf("completion seen by polling every 5 ms; the queue picks up new imports every 50 ms. "+
			"Server peak memory %.0f MB above its resident set of %.0f MB before the imports.", growth, float64(base)/(1<<20)),
	}, large}, nil
}

// callbackScenario measures, for small imports with a callback to a
// receiver on this machine, the time from completedAt (the server's clock,
// in the callback body) to the callback's arrival.
func callbackScenario(ctx context.Context, h *harness) ([]result, error) {
	a, err := h.newAccount(ctx, "Bench Callbacks")
	if err != nil {
		return nil, err
	}
	type arrival struct {
		at   time.Time
		body []byte
	}
	arrivals := make(chan arrival, 16)
	receiver := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(r.Body)
		arrivals <- arrival{time.Now(), buf.Bytes()}
	})}
	addr := freeAddr()
	ln, err := listen(addr)
	if err != nil {
		return nil, err
	}
	go func() { _ = receiver.Serve(ln) }()
	defer receiver.Close()

	rounds := max(3, h.opts.rounds)
	var samples []time.Duration
	for r := range rounds {
		body := importBody(jobsJSON(0, 10, fmt.Sprintf("K%dR", r), "Driver"), "http://"+addr+"/hook")
		if _, err := h.createImport(ctx, a, body); err != nil {
			return nil, err
		}
		select {
		case got := <-arrivals:
			var imp importResource
			if err := json.Unmarshal(got.body, &imp); err != nil || imp.Data.CompletedAt == nil {
				return nil, fmt.Errorf("callback body %.200s: %v", got.body, err)
			}
			completed, err := time.Parse(time.RFC3339Nano, *imp.Data.CompletedAt)
			if err != nil {
				return nil, err
			}
			samples = append(samples, got.at.Sub(completed))
		case <-time.After(30 * time.Second):
			return nil, fmt.Errorf("no callback within 30 s")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	s := summarize(samples)
	return []result{{
		name:   fmt.Sprintf("completion to callback received (%d imports)", s.n),
		median: s.median, p99: s.p99,
		target: "median < 1 s", pass: s.median < time.Second,
		note: "completedAt in the callback body against the receiver's clock (same machine); the delivery is queued and picked up by polling every 200 ms",
	}}, nil
}

type importResource struct {
	Data struct {
		ID          string  `json:"id"`
		Status      string  `json:"status"`
		CompletedAt *string `json:"completedAt"`
		Results     *struct {
			Added  int `json:"added"`
			Failed int `json:"failed"`
		} `json:"results"`
	} `json:"data"`
}

func importBody(jobsArray []byte, callbackURL string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jobs":`)
	b.Write(jobsArray)
	if callbackURL != "" {
		fmt.Fprintf(&b, `,"callbackUrl":%q`, callbackURL)
	}
	b.WriteString(`}`)
	return b.Bytes()
}

func (h *harness) createImport(ctx context.Context, a account, body []byte) (string, error) {
	code, resp, err := h.do(ctx, a, http.MethodPost, "/api/v2.0/job-imports", body)
	if err != nil {
		return "", err
	}
	var imp importResource
	if code != http.StatusAccepted || json.Unmarshal(resp, &imp) != nil {
		return "", fmt.Errorf("create import: %d %.300s", code, resp)
	}
	return imp.Data.ID, nil
}

// waitImport polls the import until it is complete.
func (h *harness) waitImport(ctx context.Context, a account, id string, every time.Duration) (importResource, error) {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		var imp importResource
		code, resp, err := h.do(ctx, a, http.MethodGet, "/api/v2.0/job-imports/"+id, nil)
		if err != nil {
			return imp, err
		}
		if code != 200 || json.Unmarshal(resp, &imp) != nil {
			return imp, fmt.Errorf("get import: %d %.300s", code, resp)
		}
		if imp.Data.Status == "complete" {
			if imp.Data.Results == nil {
				return imp, fmt.Errorf("complete import without results: %.300s", resp)
			}
			return imp, nil
		}
		if time.Now().After(deadline) {
			return imp, fmt.Errorf("import %s not complete after 5 minutes", id)
		}
		time.Sleep(every)
	}
}
