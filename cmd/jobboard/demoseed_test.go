package main

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"
)

// TestDemoSeedStatuses: demo seed stores the applications and spreads
// them over the lead statuses as an employer's pipeline would, each
// status's history starting at the application's new, and the list's
// status counts agree with the rows.
func TestDemoSeedStatuses(t *testing.T) {
	env := migratedEnv(t)
	a := createAccount(t, env, "Seeded")
	var printed struct{ Seeded, Statuses int }
	out := runCommand(t, env, "demo", "seed", "--account", strconv.FormatInt(a.ID, 10), "--drivers", "2000", "--seed", "7")
	if err := json.Unmarshal([]byte(out), &printed); err != nil || printed.Seeded != 2000 {
		t.Fatalf("demo seed printed %q (%v)", out, err)
	}
	db, err := sqlx.Open("postgres", strings.TrimPrefix(env[0], "DATABASE_URL="))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows []struct {
		Status  string `db:"status"`
		N       int    `db:"n"`
		Counted int    `db:"counted"`
		History int    `db:"history"`
	}
	if err := db.SelectContext(context.Background(), &rows, `
		SELECT a.status, count(*) AS n,
		       (SELECT coalesce(sum(c.n), 0) FROM application_counts c
		         WHERE c.account_id = $1 AND c.dimension = 'status' AND c.value = a.status) AS counted,
		       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM driver_status_history h
		         WHERE h.account_id = $1 AND h.driver_id = a.driver_id AND h.status = 'new')) AS history
		  FROM applications a WHERE a.account_id = $1 GROUP BY a.status`, a.ID); err != nil {
		t.Fatal(err)
	}
	changed := 0
	for _, r := range rows {
		if r.Counted != r.N {
			t.Errorf("%s: %d applicants, counted %d", r.Status, r.N, r.Counted)
		}
		if r.Status != "new" {
			changed += r.N
			if r.History != r.N {
				t.Errorf("%s: %d of %d have the new of their application in their history", r.Status, r.History, r.N)
			}
		}
	}
	if len(rows) != 8 || changed != printed.Statuses {
		t.Errorf("%d statuses held, %d applicants moved from new; demo seed said %d", len(rows), changed, printed.Statuses)
	}
	// Half the pipeline is still new (demo.pipeline), within what 2,000 draws allow.
	if share := float64(changed) / 2000; math.Abs(share-0.5) > 0.05 {
		t.Errorf("%.0f%% moved from new, want about half", 100*share)
	}
}
