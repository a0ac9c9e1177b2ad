package main

import (
	"strings"
	"testing"
	"time"
)

// TestWebhookSettings: the delivery settings are parsed, and a bad value
// is refused naming the variable.
func TestWebhookSettings(t *testing.T) {
	for _, tt := range []struct {
		workers, after string
		want           string
		wantWorkers    int
		wantAfter      time.Duration
	}{
		{workers: "20", after: "120h", wantWorkers: 20, wantAfter: 120 * time.Hour},
		{workers: "3", after: "2s", wantWorkers: 3, wantAfter: 2 * time.Second},
		{workers: "0", after: "120h", wantWorkers: 0, wantAfter: 120 * time.Hour},
		{workers: "-1", after: "120h", want: `JOBBOARD_WEBHOOK_WORKERS: "-1" is not a whole number of deliveries (0 or more)`},
		{workers: "many", after: "120h", want: `JOBBOARD_WEBHOOK_WORKERS: "many" is not a whole number`},
		{workers: "20", after: "5d", want: `JOBBOARD_WEBHOOK_DISABLE_AFTER: "5d" is not a positive Go duration`},
		{workers: "20", after: "-1h", want: `JOBBOARD_WEBHOOK_DISABLE_AFTER: "-1h" is not a positive Go duration`},
	} {
		cfg := config{rateLimit: "50", rateBurst: "100", authFailureLimit: "10", authFailureBurst: "20",
			httpAddr: ":8080", callbackAllowPrivate: "false", importRescueAfter: "10m",
			webhookWorkers: tt.workers, webhookDisableAfter: tt.after,
			maxInFlight: defaultMaxInFlight, admissionQueue: defaultAdmissionQueue, admissionWait: defaultAdmissionWait, accountFlight: defaultAccountInFlight}
		got, err := cfg.serverConfig()
		if tt.want != "" {
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s %s: error %v, want one containing %q", tt.workers, tt.after, err, tt.want)
			}
			continue
		}
		// 0 workers: deliveries are queued here and sent by other processes.
		if err != nil || got.WebhookWorkers != tt.wantWorkers || got.SendNoDeliveries != (tt.wantWorkers == 0) ||
			got.WebhookDisableAfter != tt.wantAfter {
			t.Errorf("%s %s: %d workers, %s, %v", tt.workers, tt.after, got.WebhookWorkers, got.WebhookDisableAfter, err)
		}
	}
}
