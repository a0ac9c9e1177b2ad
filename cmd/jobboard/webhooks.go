package main

import (
	"context"
	"flag"
	"io"
	"time"

	"github.com/truckjobs/jobboard/server/call"

	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/webhook"
)

const webhooksUsage = "jobboard webhooks list --account ID"

// webhooksCommand: jobboard webhooks list --account ID prints the account's
// webhook endpoints for operators, one JSON line each, oldest first.
func webhooksCommand(ctx context.Context, args []string, stdout io.Writer) error {
	args, done, err := subcommand(args, "list", webhooksUsage, stdout)
	if done || err != nil {
		return err
	}
	var account int64
	return storeCommand{name: "webhooks list",
		flags: func(fs *flag.FlagSet) {
			accountFlag(fs, &account, "the account whose webhook endpoints to list (required)")
		},
		check: func([]string) error {
			if account <= 0 {
				return usageError{"webhooks list: --account is required"}
			}
			return nil
		},
		run: func(ctx context.Context, st *store.Store, _ []string) error {
			if _, err := st.Account(ctx, account); err != nil {
				return accountError(account, err)
			}
			endpoints, err := st.WebhookEndpoints(ctx, account)
			if err != nil {
				return err
			}
			shown := make([]shownEndpoint, len(endpoints))
			for i, e := range endpoints {
				shown[i] = showEndpoint(e)
			}
			return printJSONLines(stdout, shown)
		}}.exec(ctx, args)
}

// shownEndpoint is what webhooks list prints of an endpoint. The URL is cut
// to its scheme and host, as logs show callback URLs, since receivers keep
// tokens in paths and queries; of the credentials only the type is shown,
// and no secret at all.
type shownEndpoint struct {
	ID             string   `json:"id"`
	URL            string   `json:"url"`
	Events         []string `json:"events"`
	Enabled        bool     `json:"enabled"`
	DisabledReason *string  `json:"disabledReason"`
	DisabledAt     *string  `json:"disabledAt"`
	CreatedAt      string   `json:"createdAt"`
	// AuthType is basic or bearer when deliveries carry credentials.
	AuthType *string `json:"authType"`
	// FailingSince is when the current run of failed attempts began.
	FailingSince *string `json:"failingSince"`
	Generation   int     `json:"generation"`
}

func showEndpoint(e store.WebhookEndpoint) shownEndpoint {
	return shownEndpoint{ID: store.EndpointID(e.ID), URL: webhook.Redact(e.URL), Events: e.Events,
		Enabled: e.Enabled, DisabledReason: e.DisabledReason, DisabledAt: timeText(e.DisabledAt),
		CreatedAt: call.Time(e.CreatedAt), AuthType: e.AuthType,
		FailingSince: timeText(e.FailingSince), Generation: e.Generation}
}

func timeText(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := call.Time(*t)
	return &s
}
