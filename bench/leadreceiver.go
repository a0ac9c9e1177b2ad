package main

import (
	"crypto/hmac"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/truckjobs/jobboard/server/webhook"
)

// deliveryKey is one event's delivery to one endpoint, as the receiver
// tells them apart: the endpoint (the URL path) and the webhook-id.
type deliveryKey struct{ endpoint, id string }

// leadReceiver stands for the endpoints of scenario 10: it verifies each
// delivery's signature with its endpoint's secret and records it.
type leadReceiver struct {
	mu      sync.Mutex
	secrets map[string]string // URL path → the endpoint's secret
	// counts is how many verified deliveries came per endpoint and
	// webhook-id; webhookIDs is the webhook-id each event (its id in the
	// body) first came under, per endpoint.
	counts     map[deliveryKey]int
	webhookIDs map[deliveryKey]string
	total      int       // verified deliveries, repeats included
	last       time.Time // when the latest new delivery arrived
	refused    int       // deliveries whose signature did not hold
	conflicts  int       // an event seen under a second webhook-id, or a webhook-id not the event's id
}

func newLeadReceiver() *leadReceiver {
	return &leadReceiver{secrets: map[string]string{}, counts: map[deliveryKey]int{}, webhookIDs: map[deliveryKey]string{}}
}

// expect registers an endpoint's path and secret.
func (rc *leadReceiver) expect(path, secret string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.secrets[path] = secret
}

func (rc *leadReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		http.Error(w, "cannot read the body", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	secret := rc.secrets[r.URL.Path]
	rc.mu.Unlock()
	id := r.Header.Get("webhook-id")
	if secret == "" || !signatureHolds(secret, r.Header, body) {
		rc.mu.Lock()
		rc.refused++
		rc.mu.Unlock()
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var e struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &e)
	rc.record(deliveryKey{r.URL.Path, id}, deliveryKey{r.URL.Path, e.ID}, time.Now())
	w.WriteHeader(http.StatusNoContent)
}

// record counts a verified delivery under its webhook-id and checks the
// event behind it never came under another.
func (rc *leadReceiver) record(byWebhookID, byEventID deliveryKey, at time.Time) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.total++
	if rc.counts[byWebhookID] == 0 {
		rc.last = at
	}
	rc.counts[byWebhookID]++
	first, seen := rc.webhookIDs[byEventID]
	if !seen {
		rc.webhookIDs[byEventID] = byWebhookID.id
		first = byWebhookID.id
	}
	if first != byWebhookID.id || byEventID.id != byWebhookID.id {
		rc.conflicts++
	}
}

// signatureHolds checks a delivery as a receiver does: one of the v1
// signatures is the service's signature of it with the secret.
func signatureHolds(secret string, h http.Header, body []byte) bool {
	ts, err := strconv.ParseInt(h.Get("webhook-timestamp"), 10, 64)
	if err != nil {
		return false
	}
	want, err := webhook.Sign(secret, h.Get("webhook-id"), ts, body)
	if err != nil {
		return false
	}
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return true
		}
	}
	return false
}

// leadCounts is a snapshot of what the receiver recorded.
type leadCounts struct {
	distinct  int // (endpoint, webhook-id) pairs
	total     int // deliveries, repeats included
	refused   int
	conflicts int
	last      time.Time
}

func (rc *leadReceiver) snapshot() leadCounts {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return leadCounts{distinct: len(rc.counts), total: rc.total, refused: rc.refused, conflicts: rc.conflicts, last: rc.last}
}

// repeated is how many deliveries beyond the first each pair received.
func (c leadCounts) repeated() int { return c.total - c.distinct }

func (c leadCounts) String() string {
	return fmt.Sprintf("%d distinct deliveries, %d in all, %d refused signatures, %d webhook-id conflicts",
		c.distinct, c.total, c.refused, c.conflicts)
}
