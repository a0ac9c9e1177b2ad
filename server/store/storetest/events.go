package storetest

import (
	"context"
	"testing"

	"github.com/truckjobs/jobboard/server/store"
)

// InsertEvents writes events of an account in a transaction of their own,
// with no delivery queued.
func InsertEvents(t testing.TB, st *store.Store, accountID int64, news []store.NewEvent) []store.Event {
	t.Helper()
	var written []store.Event
	err := st.InTx(context.Background(), func(tx *store.Tx) error {
		var err error
		written, err = tx.InsertEvents(context.Background(), accountID, news)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return written
}
