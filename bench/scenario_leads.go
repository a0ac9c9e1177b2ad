package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
)

func init() {
	register(10, "lead events: intake with 3 webhook endpoints, deliveries, kill -9", leadsScenario)
}

// leadBatch is the applications per SubmitApplications call here: a board's
// intake service forwarding what came in over the last moments, rather
// than scenario 9's migration-sized calls of 1,000, so the outbox's cost per
// transaction shows.
const leadBatch = 100

// leadEndpoints is how many endpoints the account delivers each event to.
const leadEndpoints = 3

// leadServerEnv is the scenario's server settings: retries and the rescue
// of jobs a killed server left running come in seconds, not the
// production schedule's minutes.
var leadServerEnv = []string{"JOBBOARD_CALLBACK_RETRY_SCHEDULE=1s,1s,2s,2s,5s,5s,10s",
	"JOBBOARD_IMPORT_RESCUE_AFTER=10s"}

// leadsScenario measures what lead events cost the intake and how fast
// and how reliably they reach the endpoints, then kills the server in the
// middle of the deliveries and checks every event still arrives.
func leadsScenario(ctx context.Context, h *harness) ([]result, error) {
	n, rounds := 10_000, 3
	if h.opts.quick {
		n, rounds = 1_000, 1
	}
	// The harness's server would work the same delivery queue: this
	// scenario runs servers of its own, kills one, and brings the
	// harness's back at the end.
	var all []result
	err := h.withServerStopped(ctx, func() error {
		ls, err := newLeadSetup(ctx, h)
		if err != nil {
			return err
		}
		defer ls.close()
		rows, err := ls.intakeRounds(ctx, n, rounds)
		all = rows.rows
		if err != nil || !rows.complete {
			return err
		}
		crash, err := ls.crashRound(ctx, n)
		if err != nil {
			return err
		}
		shared, err := ls.sharedRound(ctx, n)
		if err != nil {
			return err
		}
		all = append(append(all, crash...), shared...)
		return nil
	})
	return all, err
}

// leadSetup is the scenario's server, receiver and two accounts: one
// without endpoints, one with three pointing at the receiver. The server
// takes the intake; until the shared round it sends no deliveries
// (JOBBOARD_WEBHOOK_WORKERS=0) and a delivery replica, started for each
// round's backlog, sends them.
type leadSetup struct {
	h          *harness
	server     *process
	deliverer  *process // the delivery replica while it runs
	receiver   *leadReceiver
	stopRecv   func()
	bare, hook account
	round      int // applications of each round get addresses of their own
}

func newLeadSetup(ctx context.Context, h *harness) (*leadSetup, error) {
	ls := &leadSetup{h: h, receiver: newLeadReceiver()}
	addr := freeAddr()
	ln, err := listen(addr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: ls.receiver, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	ls.stopRecv = func() { _ = srv.Close() }
	ok := false
	defer func() {
		if !ok {
			ls.close()
		}
	}()
	if ls.server, err = h.startServer(ctx, "server-leads-intake", append(leadServerEnv, "JOBBOARD_WEBHOOK_WORKERS=0")...); err != nil {
		return nil, err
	}
	for _, a := range []struct {
		name string
		to   *account
	}{{"Bench Leads Without Endpoints", &ls.bare}, {"Bench Leads", &ls.hook}} {
		if *a.to, err = h.newAccount(ctx, a.name); err != nil {
			return nil, err
		}
		if err := ls.postJobs(ctx, *a.to); err != nil {
			return nil, err
		}
	}
	for i := 1; i <= leadEndpoints; i++ {
		path := fmt.Sprintf("/hooks/%d", i)
		secret, err := ls.createEndpoint(ctx, "http://"+addr+path)
		if err != nil {
			return nil, err
		}
		ls.receiver.expect(path, secret)
	}
	ok = true
	return ls, nil
}

func (ls *leadSetup) close() {
	if ls.server != nil {
		ls.server.stop()
	}
	if ls.deliverer != nil {
		ls.deliverer.stop()
	}
	ls.stopRecv()
}

// request sends a REST call to the scenario's server with the account's key.
func (ls *leadSetup) request(ctx context.Context, a account, method, path string, body string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, ls.server.httpBase+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.SetBasicAuth(a.APIKey, "")
	resp, err := ls.h.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

func (ls *leadSetup) postJobs(ctx context.Context, a account) error {
	code, resp, err := ls.request(ctx, a, http.MethodPost, "/api/v2.0/jobs.json", string(jobsJSON(0, intakeJobs, "IN", "Driver")))
	if err == nil && code != 200 {
		err = fmt.Errorf("post jobs: %d %.300s", code, resp)
	}
	return err
}

// createEndpoint adds an endpoint for new applications (docs/api.md, Webhook endpoints) and
// returns its signing secret.
func (ls *leadSetup) createEndpoint(ctx context.Context, url string) (string, error) {
	body := fmt.Sprintf(`{"url": %q, "events": ["driver.application.received"], "description": "bench receiver"}`, url)
	code, resp, err := ls.request(ctx, ls.hook, http.MethodPost, "/api/v2.0/webhooks", body)
	if err != nil {
		return "", err
	}
	var created struct {
		Data struct {
			ID     string `json:"id"`
			Secret string `json:"secret"`
		} `json:"data"`
	}
	if code != http.StatusCreated || json.Unmarshal(resp, &created) != nil || !strings.HasPrefix(created.Data.Secret, "whsec_") {
		return "", fmt.Errorf("POST /api/v2.0/webhooks: %d %.300s", code, resp)
	}
	return created.Data.Secret, nil
}

// intake sends n new applications to the account through
// SubmitApplications in calls of leadBatch, and times them.
func (ls *leadSetup) intake(ctx context.Context, a account, n int) (time.Duration, error) {
	conn, err := grpc.NewClient(ls.server.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	client := jobboardv2.NewDriverIntakeServiceClient(conn)
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+benchInternalToken,
		"x-account-id", strconv.FormatInt(a.ID, 10))
	ls.round++
	apps := intakeApplications(a.ID, n, uint64(ls.round), fmt.Sprintf("lead%d.", ls.round))
	took, err := timeIntakeBatches(ctx, client, apps, leadBatch)
	if err != nil {
		return 0, fmt.Errorf("SubmitApplications: %w", err)
	}
	return took, nil
}

// waitDeliveries waits until the receiver holds want distinct deliveries,
// at most limit; the error says how far it got.
func (ls *leadSetup) waitDeliveries(ctx context.Context, want int, limit time.Duration) (leadCounts, error) {
	deadline := time.Now().Add(limit)
	for {
		c := ls.receiver.snapshot()
		if c.distinct >= want {
			return c, nil
		}
		if time.Now().After(deadline) {
			return c, fmt.Errorf("after %s the receiver has %s; want %d distinct", limit, c, want)
		}
		select {
		case <-ctx.Done():
			return c, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// drainLimit bounds the wait for a round's deliveries: far above any rate
// worth reporting, so a timeout means deliveries are lost or stuck.
func drainLimit(deliveries int) time.Duration {
	return max(2*time.Minute, time.Duration(deliveries)*20*time.Millisecond)
}

// processCPU is the CPU time a process has used, from /proc (Linux).
func processCPU(p *process) time.Duration {
	t, _ := pidCPU(p.cmd.Process.Pid)
	return t
}
