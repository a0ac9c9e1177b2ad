// Command webhook-receiver receives the job board's import callbacks: it
// checks each one's Standard Webhooks signature with the account's webhook
// secret, answers 204 to a good one and 401 to any other, and prints each
// verified callback's import id, status and results on one line.
//
//	JOBBOARD_WEBHOOK_SECRET=whsec_... go -C examples/webhook-receiver run . -addr 127.0.0.1:9999
//
// It uses the standard library only, so its verification can be copied into
// any Go service.
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// tolerance is how far a callback's webhook-timestamp may be from now. A
// captured callback replayed later is refused once it is this old.
const tolerance = 5 * time.Minute

// maxBody bounds what is read of a request. An import's callback is about
// the size of its results, well under this even for 50,000 failed jobs.
const maxBody = 64 << 20

func main() {
	addr := flag.String("addr", "127.0.0.1:9999", "address to listen on")
	flag.Parse()
	secret := os.Getenv("JOBBOARD_WEBHOOK_SECRET")
	if secret == "" {
		fmt.Fprintln(os.Stderr, "webhook-receiver: set JOBBOARD_WEBHOOK_SECRET to the account's webhook secret (whsec_...)")
		os.Exit(2)
	}
	v, err := newVerifier(secret)
	if err != nil {
		fmt.Fprintln(os.Stderr, "webhook-receiver:", err)
		os.Exit(2)
	}
	log.SetFlags(0)
	log.Printf("webhook-receiver: listening on http://%s/", *addr)
	// Timeouts, so that a slow or silent client cannot hold a connection.
	srv := &http.Server{Addr: *addr, Handler: &receiver{verifier: v, out: os.Stdout},
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: time.Minute}
	err = srv.ListenAndServe()
	fmt.Fprintln(os.Stderr, "webhook-receiver:", err)
	os.Exit(1)
}

// checkHeaders is what can be checked before the body is read: the three
// headers are there and the timestamp is recent.
func (v *verifier) checkHeaders(h http.Header) error {
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return errors.New("missing webhook-id, webhook-timestamp or webhook-signature")
	}
	seconds, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("webhook-timestamp %q is not a number of seconds", ts)
	}
	if age := v.now().Sub(time.Unix(seconds, 0)); age > tolerance || age < -tolerance {
		return fmt.Errorf("webhook-timestamp is %s away from now", age.Round(time.Second))
	}
	return nil
}

// verifier checks Standard Webhooks signatures made with one secret.
type verifier struct {
	key []byte
	now func() time.Time
}

// newVerifier decodes a secret: "whsec_" followed by the base64 key.
func newVerifier(secret string) (*verifier, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return nil, errors.New(`the webhook secret is not "whsec_" followed by base64`)
	}
	return &verifier{key: key, now: time.Now}, nil
}

// verify says why a request's headers and raw body are not a callback signed
// with the secret, or nil when they are.
func (v *verifier) verify(h http.Header, body []byte) error {
	if err := v.checkHeaders(h); err != nil {
		return err
	}
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	mac := hmac.New(sha256.New, v.key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	// The header may carry several signatures (while a secret is being
	// replaced, or of other versions): one good v1 signature is enough.
	for _, sig := range strings.Fields(sigs) {
		version, value, _ := strings.Cut(sig, ",")
		got, err := base64.StdEncoding.DecodeString(value)
		if version == "v1" && err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("no webhook-signature matches the secret")
}

// receiver answers callbacks and prints the verified ones to out.
type receiver struct {
	verifier *verifier
	out      io.Writer
}

// callback is what the receiver prints of an import callback's body (the
// import as GET /api/v2.0/job-imports/{id} shows it).
type callback struct {
	Data struct {
		ID      string `json:"id"`
		Status  string `json:"status"`
		Results *struct {
			Added     int `json:"added"`
			Updated   int `json:"updated"`
			Unchanged int `json:"unchanged"`
			Deleted   int `json:"deleted"`
			Failed    int `json:"failed"`
		} `json:"results"`
	} `json:"data"`
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "callbacks are POSTed", http.StatusMethodNotAllowed)
		return
	}
	// What needs no body is checked before reading it, and the body is read
	// only up to maxBody: until the signature holds, it may come from anyone.
	if err := rc.verifier.checkHeaders(r.Header); err != nil {
		log.Printf("webhook-receiver: refused a callback: %v", err)
		http.Error(w, "bad signature", http.StatusUnauthorized)
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
	if err := rc.verifier.verify(r.Header, body); err != nil {
		log.Printf("webhook-receiver: refused a callback: %v", err)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var cb callback
	if err := json.Unmarshal(body, &cb); err != nil {
		log.Printf("webhook-receiver: a signed callback that is not an import: %v", err)
	}
	// A retry carries the same webhook-id; a real receiver would remember
	// the ids it has handled and skip repeats.
	fmt.Fprintf(rc.out, "import %s %s: %s (webhook-id %s)\n", cb.Data.ID, cb.Data.Status, results(cb), r.Header.Get("webhook-id"))
	w.WriteHeader(http.StatusNoContent)
}

// results is a callback's counts, or "no results" before an import ran.
func results(cb callback) string {
	r := cb.Data.Results
	if r == nil {
		return "no results"
	}
	return fmt.Sprintf("added %d, updated %d, unchanged %d, deleted %d, failed %d",
		r.Added, r.Updated, r.Unchanged, r.Deleted, r.Failed)
}
