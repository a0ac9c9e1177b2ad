// Command lead-receiver receives the job board's lead events on a webhook
// endpoint: it verifies each delivery with the official Standard Webhooks
// library and the endpoint's secret, answers 204 to a good one and 401 to
// any other, and prints one line for each event it has not seen before.
//
//	JOBBOARD_ENDPOINT_SECRET=whsec_... go -C examples/lead-receiver run . -addr 127.0.0.1:9998
//
// Deliveries come at least once: a retry, a redelivery or a delivery
// repeated after the server crashed carries the event's id again as
// webhook-id, so the receiver acts on an id once and acknowledges repeats.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// maxBody bounds what is read of a delivery before its signature is
// checked. An event is one driver or one import summary, far below this.
const maxBody = 4 << 20

func main() {
	addr := flag.String("addr", "127.0.0.1:9998", "address to listen on")
	flag.Parse()
	rc, err := newReceiver(os.Getenv("JOBBOARD_ENDPOINT_SECRET"), os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lead-receiver:", err)
		os.Exit(2)
	}
	log.SetFlags(0)
	log.Printf("lead-receiver: listening on http://%s/", *addr)
	// Timeouts, so that a slow or silent client cannot hold a connection.
	srv := &http.Server{Addr: *addr, Handler: rc,
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: time.Minute}
	err = srv.ListenAndServe()
	fmt.Fprintln(os.Stderr, "lead-receiver:", err)
	os.Exit(1)
}

// receiver answers deliveries and prints each new verified event to out.
type receiver struct {
	hook *standardwebhooks.Webhook
	out  io.Writer

	// mu makes "not seen yet, print, remember" one step, so that two
	// deliveries of one event arriving together print it once.
	mu sync.Mutex
	// seen holds the webhook-ids acted on. In memory, for the example: it
	// is forgotten on restart and grows without bound. A real receiver
	// records the id in its own database, in the transaction that acts on
	// the event, and forgets ids after the service's retention (30 days).
	seen map[string]bool
}

// newReceiver takes the endpoint's secret as the create and rotate-secret
// answers show it: "whsec_" followed by base64.
func newReceiver(secret string, out io.Writer) (*receiver, error) {
	key, found := strings.CutPrefix(secret, "whsec_")
	if !found || key == "" {
		return nil, errors.New(`set JOBBOARD_ENDPOINT_SECRET to the endpoint's secret ("whsec_..." from the create or rotate-secret answer)`)
	}
	hook, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return nil, errors.New(`the endpoint secret is not "whsec_" followed by base64`)
	}
	return &receiver{hook: hook, out: out, seen: map[string]bool{}}, nil
}

// event is what the receiver reads of a delivery's body, the event object.
type event struct {
	ID   string          `json:"id"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "deliveries are POSTed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	if err != nil {
		http.Error(w, "cannot read the body", http.StatusBadRequest)
		return
	}
	// Verify checks the timestamp is within 5 minutes of now and that one
	// of the v1 signatures matches: during a secret rotation the service
	// signs with both secrets, so either one configured here verifies.
	if err := rc.hook.Verify(body, r.Header); err != nil {
		log.Printf("lead-receiver: refused a delivery: %v", err)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var e event
	if err := json.Unmarshal(body, &e); err != nil || e.ID == "" {
		log.Printf("lead-receiver: a signed delivery that is not an event: %v", err)
		http.Error(w, "not an event", http.StatusBadRequest)
		return
	}
	rc.handle(r.Header.Get(standardwebhooks.HeaderWebhookID), e)
	w.WriteHeader(http.StatusNoContent)
}

// handle acts on an event once per webhook-id: here, prints its line.
func (rc *receiver) handle(webhookID string, e event) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.seen[webhookID] {
		return
	}
	fmt.Fprintln(rc.out, describe(e))
	rc.seen[webhookID] = true
}

// describe is an event's line: its id and type, and what it is about.
func describe(e event) string {
	line := e.ID + " " + e.Type
	switch e.Type {
	case "driver.application.received":
		var d struct {
			ID        int64  `json:"id"`
			FirstName string `json:"first_name"`
			LastName  string `json:"last_name"`
		}
		if json.Unmarshal(e.Data, &d) == nil {
			line += fmt.Sprintf(": driver %d, %s %s", d.ID, d.FirstName, d.LastName)
		}
	case "job_import.completed":
		var imp struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
		if json.Unmarshal(e.Data, &imp) == nil {
			line += fmt.Sprintf(": import %s %s", imp.ID, imp.Status)
		}
	case "webhook.test":
		var t struct {
			WebhookID string `json:"webhookId"`
		}
		if json.Unmarshal(e.Data, &t) == nil {
			line += ": endpoint " + t.WebhookID
		}
	}
	return line
}
