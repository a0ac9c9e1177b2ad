package pgbouncertest_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	_ "github.com/lib/pq"

	"github.com/truckjobs/jobboard/internal/pgbouncertest"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// TestTransactionPooling: two client connections share PgBouncer's one
// server connection, the second getting it as soon as the first's
// transaction ends while the first stays connected. In session mode the
// second would wait until the first disconnected.
func TestTransactionPooling(t *testing.T) {
	b := pgbouncertest.Start(t, storetest.URL(t), pgbouncertest.Options{PoolSize: 1})
	db, err := sql.Open("postgres", b.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	first, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	tx, err := first.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var firstPID, secondPID int
	if err := tx.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&firstPID); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	second, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if err := second.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&secondPID); err != nil {
		t.Fatalf("second client while the first stays connected: %v\n%s", err, b.Log())
	}
	if secondPID != firstPID {
		t.Errorf("server process %d, then %d: want the pool's one connection twice", firstPID, secondPID)
	}
}

// TestSeveralProcesses: PgBouncer processes sharing one port
// (so_reuseport) all run, and connections through the port are answered.
func TestSeveralProcesses(t *testing.T) {
	b := pgbouncertest.Start(t, storetest.URL(t), pgbouncertest.Options{PoolSize: 2, Processes: 2})
	if len(b.PIDs()) != 2 {
		t.Fatalf("%d processes, want 2", len(b.PIDs()))
	}
	for _, pid := range b.PIDs() {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			t.Errorf("process %d: %v", pid, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			db, err := sql.Open("postgres", b.URL())
			if err != nil {
				t.Error(err)
				return
			}
			defer db.Close()
			var one int
			if err := db.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil || one != 1 {
				t.Errorf("through the port: %d, %v", one, err)
			}
		})
	}
	wg.Wait()
}
