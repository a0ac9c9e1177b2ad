package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/imports"
	"github.com/truckjobs/jobboard/server/leads"

	"github.com/truckjobs/jobboard/server/drivers"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"google.golang.org/grpc/status"

	"github.com/truckjobs/jobboard/cmd/jobboard/demo"
	"github.com/truckjobs/jobboard/gateway/render"
	"github.com/truckjobs/jobboard/internal/apikey"
	"github.com/truckjobs/jobboard/server"
	"github.com/truckjobs/jobboard/server/intake"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/webhook"
)

// storeCommand is an administrative command on the database: it parses its
// flags, checks them before touching the database, opens and migrates the
// database, and runs.
type storeCommand struct {
	name  string // as typed, such as "keys create"
	nargs int    // positional arguments required
	// flags registers the command's own flags.
	flags func(fs *flag.FlagSet)
	// check validates the command line; it runs before the database is opened.
	check func(args []string) error
	run   func(ctx context.Context, st *store.Store, args []string) error
}

func (c storeCommand) exec(ctx context.Context, args []string) error {
	var cfg config
	var dataDir string
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	cfg.databaseFlag(fs)
	fs.StringVar(&dataDir, "data", devDataDir, "without a database URL: the data folder of the jobboard dev (make run) whose database to use")
	if c.flags != nil {
		c.flags(fs)
	}
	// A mistake is the one line of the usage error below, not that line
	// and every flag's help; -h asks for the help.
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(os.Stderr)
			fs.Usage()
			return err
		}
		return usageError{fmt.Sprintf("%s: %v", c.name, err)}
	}
	noteSecrets(fs)
	if fs.NArg() != c.nargs {
		return usageError{fmt.Sprintf("%s: expected %d argument(s), got %d", c.name, c.nargs, fs.NArg())}
	}
	if c.check != nil {
		if err := c.check(fs.Args()); err != nil {
			return err
		}
	}
	if err := cfg.databaseOrLocal(c.name, dataDir); err != nil {
		return err
	}
	st, err := openAndMigrate(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	return c.run(ctx, st, fs.Args())
}

// accountFlag registers --account, whose value must be an account id: a
// malformed one is refused in one line before the database is opened.
func accountFlag(fs *flag.FlagSet, account *int64, help string) {
	fs.Func("account", help+" (an account `ID`)", func(v string) error {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			return errors.New("not an account id: an account id is a positive whole number, as jobboard accounts list shows")
		}
		*account = id
		return nil
	})
}

// importIDForm says what an import id looks like, for messages.
const importIDForm = "an import id is a UUID such as 0b6a7f0e-8d0c-4d7e-9a1b-2c3d4e5f6a7b, as POST /api/v2.0/job-imports answered it"

// printJSON writes v as one JSON line.
func printJSON(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) }

// accountError names the account when err says it does not exist.
func accountError(account int64, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("account %d not found", account)
	}
	return err
}

// printJSONLines writes each of items as one JSON line.
func printJSONLines[T any](w io.Writer, items []T) error {
	for _, v := range items {
		if err := printJSON(w, v); err != nil {
			return err
		}
	}
	return nil
}

func migrateCommand(ctx context.Context, args []string) error {
	return storeCommand{name: "migrate", run: func(ctx context.Context, st *store.Store, _ []string) error {
		v, err := st.SchemaVersion(ctx)
		if err != nil {
			return err
		}
		if v > store.LatestVersion() {
			slog.Warn("database schema is ahead of this build", "version", v, "build_version", store.LatestVersion())
			return nil
		}
		slog.Info("database schema is current", "version", v)
		return nil
	}}.exec(ctx, args)
}

const accountsUsage = "jobboard accounts create --name NAME | list | rotate-webhook-secret --account ID"

func accountsCommand(ctx context.Context, args []string, stdout io.Writer) error {
	var name string
	var account int64
	accountFlag := func(fs *flag.FlagSet) {
		accountFlag(fs, &account, "the account (required)")
	}
	needAccount := func(cmd string) func([]string) error {
		return func([]string) error {
			if account <= 0 {
				return usageError{cmd + ": --account is required"}
			}
			return nil
		}
	}
	if len(args) == 0 {
		return usageError{"usage: " + accountsUsage}
	}
	switch args[0] {
	case "create":
		return storeCommand{name: "accounts create",
			flags: func(fs *flag.FlagSet) { fs.StringVar(&name, "name", "", "the employer's name (required)") },
			check: func([]string) error {
				if name = strings.TrimSpace(name); name == "" {
					return usageError{"accounts create: --name is required"}
				}
				return nil
			},
			run: func(ctx context.Context, st *store.Store, _ []string) error {
				creds, err := server.CreateAccount(ctx, st, name)
				if err != nil {
					return fmt.Errorf("create account: %w", err)
				}
				return printJSON(stdout, creds)
			}}.exec(ctx, args[1:])
	case "list":
		return storeCommand{name: "accounts list", run: func(ctx context.Context, st *store.Store, _ []string) error {
			accounts, err := st.ListAccounts(ctx)
			if err != nil {
				return err
			}
			return printJSONLines(stdout, accounts)
		}}.exec(ctx, args[1:])
	case "rotate-webhook-secret":
		return storeCommand{name: "accounts rotate-webhook-secret", flags: accountFlag,
			check: needAccount("accounts rotate-webhook-secret"),
			run: func(ctx context.Context, st *store.Store, _ []string) error {
				secret, err := server.RotateWebhookSecret(ctx, st, account)
				if err != nil {
					return accountError(account, err)
				}
				return printJSON(stdout, map[string]any{"id": account, "webhookSecret": secret})
			}}.exec(ctx, args[1:])
	case "-h", "--help":
		fmt.Fprintln(stdout, "Usage: "+accountsUsage)
		return nil
	}
	return usageError{"usage: " + accountsUsage}
}

// revokeConfirmWithin is how long keys revoke waits for running servers to
// confirm they forgot the revoked keys.
const revokeConfirmWithin = 10 * time.Second

const keysUsage = "jobboard keys create --account ID | keys list --account ID | keys revoke --account ID KEY_ID | keys revoke KEY"

// keysCommand: jobboard keys create --account ID | keys list --account ID |
// keys revoke --account ID KEY_ID | keys revoke KEY.
func keysCommand(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return usageError{"usage: " + keysUsage}
	}
	var account int64
	accountFlag := func(help string) func(fs *flag.FlagSet) {
		return func(fs *flag.FlagSet) { accountFlag(fs, &account, help) }
	}
	needAccount := func(cmd string) func([]string) error {
		return func([]string) error {
			if account <= 0 {
				return usageError{cmd + ": --account is required"}
			}
			return nil
		}
	}
	switch args[0] {
	case "create":
		return storeCommand{name: "keys create", flags: accountFlag("the account to add a key to (required)"),
			check: needAccount("keys create"),
			run: func(ctx context.Context, st *store.Store, _ []string) error {
				key, err := server.CreateAPIKey(ctx, st, account)
				if err != nil {
					return accountError(account, err)
				}
				return printJSON(stdout, key)
			}}.exec(ctx, args[1:])
	case "list":
		return storeCommand{name: "keys list", flags: accountFlag("the account whose keys to list (required)"),
			check: needAccount("keys list"),
			run: func(ctx context.Context, st *store.Store, _ []string) error {
				keys, err := st.APIKeys(ctx, account)
				if err != nil {
					return accountError(account, err)
				}
				return printJSONLines(stdout, keys)
			}}.exec(ctx, args[1:])
	case "revoke":
		return revokeCommand(ctx, args[1:], stdout)
	case "-h", "--help":
		fmt.Fprintln(stdout, "Usage: "+keysUsage)
		return nil
	}
	return usageError{"usage: " + keysUsage}
}

// revokeForms explains the two ways to name a key, for usage errors.
const revokeForms = "name the key by the whole key (keys revoke KEY) or by its id within its account " +
	"(keys revoke --account ID KEY_ID; keys list --account ID shows the ids)"

// revokeCommand revokes one key, named by the whole key or by an account
// and a key id. A prefix is refused: two accounts' keys may share one, and
// revoking by it could revoke another account's key.
func revokeCommand(ctx context.Context, args []string, stdout io.Writer) error {
	var account int64
	var ref store.KeyRef
	return storeCommand{name: "keys revoke", nargs: 1,
		flags: func(fs *flag.FlagSet) {
			accountFlag(fs, &account, "the account whose key id is given")
		},
		check: func(rest []string) error {
			arg := strings.TrimSpace(rest[0])
			id, idErr := strconv.ParseInt(arg, 10, 64)
			switch {
			case account != 0 && (idErr != nil || id <= 0):
				return usageError{fmt.Sprintf("keys revoke: with --account, %q must be a key id (a positive whole number); %s", arg, revokeForms)}
			case account != 0:
				ref = store.KeyRef{AccountID: account, KeyID: id}
			case idErr == nil:
				return usageError{fmt.Sprintf("keys revoke: %q looks like a key id, which needs --account; %s", arg, revokeForms)}
			case !apikey.Valid(arg):
				return usageError{fmt.Sprintf("keys revoke: %q is not a whole API key (prefixes are no longer accepted); %s", apikey.Prefix(arg), revokeForms)}
			default:
				ref = store.KeyRef{Hash: apikey.Hash(arg)}
			}
			return nil
		},
		run: func(ctx context.Context, st *store.Store, _ []string) error {
			key, err := st.RevokeAPIKey(ctx, ref, revokeConfirmWithin)
			switch {
			case errors.Is(err, store.ErrNotFound) && ref.Hash != "":
				return errors.New("keys revoke: no active key is that key (already revoked, or never created); nothing revoked")
			case errors.Is(err, store.ErrNotFound):
				return fmt.Errorf("keys revoke: account %d has no active key with id %d; nothing revoked (keys list --account %d shows its keys)",
					ref.AccountID, ref.KeyID, ref.AccountID)
			case err != nil:
				return err
			}
			if key.Confirmed < key.Servers {
				slog.Warn("not every running server confirmed in time that it forgot the key; those that did not drop it within 30 s",
					"servers", key.Servers, "confirmed", key.Confirmed)
			}
			return printJSON(stdout, key)
		}}.exec(ctx, args)
}

// importsCommand: jobboard imports show ID prints an import's state and its
// callback delivery attempts, for operators.
func importsCommand(ctx context.Context, args []string, stdout io.Writer) error {
	args, done, err := subcommand(args, "show", "jobboard imports show IMPORT_ID", stdout)
	if done || err != nil {
		return err
	}
	return storeCommand{name: "imports show", nargs: 1, check: func(rest []string) error {
		if !store.IsImportID(rest[0]) {
			return usageError{fmt.Sprintf("imports show: %q is not an import id; %s", cutArg(rest[0]), importIDForm)}
		}
		return nil
	}, run: func(ctx context.Context, st *store.Store, rest []string) error {
		imp, err := st.ImportByIDAnyAccount(ctx, rest[0])
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("job import %q not found", rest[0])
		}
		if err != nil {
			return err
		}
		attempts, err := st.CallbackAttempts(ctx, imp.ID)
		if err != nil {
			return err
		}
		shown, err := showImport(imp, attempts)
		if err != nil {
			return err
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(shown)
	}}.exec(ctx, args)
}

// cutArg cuts an argument quoted in a message to 100 bytes.
func cutArg(s string) string {
	if len(s) > 100 {
		return strings.ToValidUTF8(s[:100], "") + "..."
	}
	return s
}

// shownImport is what imports show prints: the API's import object (its
// data, written by the API's own renderer, so every count is there, zeros
// too) followed by what only operators see, all in camelCase. The callback
// URL is cut to its scheme and host, as logs and recorded attempts show it:
// its path or query may hold the receiver's token.
type shownImport struct {
	ID               string            `json:"id"`
	RequestedAt      string            `json:"requestedAt"`
	CompletedAt      *string           `json:"completedAt"`
	Results          json.RawMessage   `json:"results"`
	Status           string            `json:"status"`
	AccountID        int64             `json:"accountId"`
	DeleteJobs       bool              `json:"deleteJobs"`
	CallbackURL      *string           `json:"callbackUrl"`
	RequestID        *string           `json:"requestId"`
	CallbackAttempts []callbackAttempt `json:"callbackAttempts"`
}

// callbackAttempt is one delivery attempt of an import's callback.
type callbackAttempt struct {
	Attempt     int     `json:"attempt"`
	WebhookID   string  `json:"webhookId"`
	AttemptedAt string  `json:"attemptedAt"`
	StatusCode  *int    `json:"statusCode"`
	Error       *string `json:"error"`
	DurationMS  int     `json:"durationMs"`
}

func showImport(imp store.JobImport, attempts []store.CallbackAttempt) (shownImport, error) {
	resp, err := imports.ImportResponse(imp)
	if err != nil {
		return shownImport{}, err
	}
	rendered, err := render.JSON(resp)
	if err != nil {
		return shownImport{}, err
	}
	var api struct {
		Data struct {
			ID, Status, RequestedAt string
			CompletedAt             *string
			Results                 json.RawMessage
		}
	}
	if err := json.Unmarshal(rendered, &api); err != nil {
		return shownImport{}, fmt.Errorf("read the rendered import: %w", err)
	}
	shown := shownImport{ID: api.Data.ID, Status: api.Data.Status, RequestedAt: api.Data.RequestedAt,
		CompletedAt: api.Data.CompletedAt, Results: api.Data.Results, AccountID: imp.AccountID,
		DeleteJobs: imp.DeleteJobs, RequestID: imp.RequestID,
		CallbackAttempts: make([]callbackAttempt, len(attempts))}
	if imp.CallbackURL != nil {
		schemeAndHost := webhook.Redact(*imp.CallbackURL)
		shown.CallbackURL = &schemeAndHost
	}
	for i, a := range attempts {
		shown.CallbackAttempts[i] = callbackAttempt{Attempt: a.Attempt, WebhookID: a.WebhookID,
			AttemptedAt: call.Time(a.AttemptedAt), StatusCode: a.StatusCode, Error: a.Error, DurationMS: a.DurationMS}
	}
	return shown, nil
}

// driversCommand: jobboard drivers import --account ID FILE.
func driversCommand(ctx context.Context, args []string, stdout io.Writer) error {
	args, done, err := subcommand(args, "import", "jobboard drivers import --account ID FILE", stdout)
	if done || err != nil {
		return err
	}
	var account int64
	var apps []*intake.Application
	var read time.Duration
	return storeCommand{name: "drivers import", nargs: 1,
		flags: func(fs *flag.FlagSet) {
			accountFlag(fs, &account, "the account the drivers applied to (required)")
		},
		check: func(rest []string) error {
			if account <= 0 {
				return usageError{"drivers import: --account is required"}
			}
			started := time.Now()
			data, err := os.ReadFile(rest[0])
			if err != nil {
				return err
			}
			if apps, err = parseDriverFile(data); err != nil {
				return fmt.Errorf("%s: %w", rest[0], err)
			}
			read = time.Since(started)
			return nil
		},
		run: func(ctx context.Context, st *store.Store, rest []string) error {
			ob, err := cliOutbox(st)
			if err != nil {
				return err
			}
			started := time.Now()
			if _, err := drivers.ImportApplicationFile(ctx, st, ob, account, apps); err != nil {
				return fmt.Errorf("%s: nothing imported: %s", rest[0], status.Convert(err).Message())
			}
			stored := time.Since(started)
			// No fold loop runs in this process: fold before exiting.
			started = time.Now()
			st.FoldWrittenCounts(ctx)
			// Where a long import's time went, for its operator.
			slog.InfoContext(ctx, "drivers imported", "applications", len(apps), "read_seconds", read.Seconds(),
				"store_seconds", stored.Seconds(), "fold_seconds", time.Since(started).Seconds())
			return printJSON(stdout, map[string]int{"imported": len(apps)})
		}}.exec(ctx, args)
}

// demoCommand: jobboard demo seed --account ID --drivers N.
func demoCommand(ctx context.Context, args []string, stdout io.Writer) error {
	args, done, err := subcommand(args, "seed", "jobboard demo seed --account ID [--drivers N]", stdout)
	if done || err != nil {
		return err
	}
	var account int64
	var n int
	var seed uint64
	return storeCommand{name: "demo seed",
		flags: func(fs *flag.FlagSet) {
			accountFlag(fs, &account, "the account the synthetic drivers apply to (required)")
			fs.IntVar(&n, "drivers", 100_000, "how many synthetic driver applications to add")
			fs.Uint64Var(&seed, "seed", uint64(time.Now().UnixNano()), "random seed")
		},
		check: func([]string) error {
			if account <= 0 || n <= 0 {
				return usageError{"demo seed: --account and a positive --drivers are required"}
			}
			return nil
		},
		run: func(ctx context.Context, st *store.Store, _ []string) error {
			started := time.Now()
			refs, err := accountJobRefs(ctx, st, account)
			if err != nil {
				return err
			}
			tag := fmt.Sprintf("s%x.", seed)
			now := time.Now()
			apps := demo.Applications(account, n, seed, now, refs, tag)
			if err := st.SeedApplications(ctx, account, apps); err != nil {
				return err
			}
			statuses := demo.Pipeline(apps, seed, now)
			if err := seedStatuses(ctx, st, account, statuses); err != nil {
				return err
			}
			// Each batch of statuses wrote count rows of its own: fold them
			// now, as the seed folded its own.
			if err := st.CompactApplicationCounts(ctx, account); err != nil {
				return err
			}
			return printJSON(stdout, map[string]any{"seeded": n, "statuses": len(statuses), "seconds": time.Since(started).Seconds()})
		}}.exec(ctx, args)
}

// seedStatuses sets the seeded applicants' statuses as an employer's
// batches do (SetDriverStatuses), a thousand a transaction, without the
// events: the seed writes none for the applications either.
func seedStatuses(ctx context.Context, st *store.Store, account int64, statuses []demo.StatusOf) error {
	for start := 0; start < len(statuses); start += drivers.MaxStatusBatch {
		chunk := statuses[start:min(start+drivers.MaxStatusBatch, len(statuses))]
		err := st.InRetriedTx(ctx, "seed statuses", func(tx *store.Tx) error {
			keys := make([]string, len(chunk))
			for i, s := range chunk {
				keys[i] = store.FoldCase(s.Email)
			}
			ids, err := tx.DriversByEmail(ctx, account, keys)
			if err != nil {
				return err
			}
			updates := make([]store.StatusUpdate, 0, len(chunk))
			for i, s := range chunk {
				if id, ok := ids[keys[i]]; ok {
					updates = append(updates, store.StatusUpdate{DriverID: id, StatusChange: s.StatusChange})
				}
			}
			_, err = tx.SetDriverStatuses(ctx, account, updates)
			return err
		})
		if err != nil {
			return fmt.Errorf("seed statuses: %w", err)
		}
	}
	return nil
}

// cliOutbox is the outbox of a command that stores what has events: its
// queue client only inserts; the server's queue delivers, on the server's
// own retry schedule.
func cliOutbox(st *store.Store) (*leads.Outbox, error) {
	queue, err := river.NewClient(riverdatabasesql.New(st.DB().DB), &river.Config{})
	if err != nil {
		return nil, fmt.Errorf("job queue: %w", err)
	}
	return leads.NewOutbox(queue, render.JSON)
}
