package pgbouncertest_test

import (
	"context"
	"database/sql"
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
