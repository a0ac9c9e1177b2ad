package jobs

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/store"
	"github.com/truckjobs/jobboard/server/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// TestImportResultsHoldNoJobTexts: an import's results are held until it
// completes, so an entry must not keep the job it names alive. A refused
// job's reference once pointed into the array of all its decoded texts,
// and 40,000 refused jobs kept some 50 MB that way.
func TestImportResultsHoldNoJobTexts(t *testing.T) {
	const n, descriptionSize = 2000, 8 << 10
	jobs := make([]*restv2.JobInput, n)
	for i := range jobs {
		// No title: each job is refused, with an entry naming its reference.
		jobs[i] = &restv2.JobInput{ReferenceNumber: new(fmt.Sprintf("R%d", i)), State: new("TX"),
			DriverType: new("Company Driver"), FreightType: new("Dry Van"),
			Description: new(fmt.Sprintf("%d %s", i, strings.Repeat("Home every weekend. ", descriptionSize/20)))}
	}
	payload, err := StoredForm(jobs)
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.Store(t)
	account := storetest.NewAccount(t, st, "Importer").AccountID
	svc := New(st, time.Now)
	ctx := context.Background()

	before := liveHeap()
	var results *store.ImportResults
	err = st.InTx(ctx, func(tx *store.Tx) error {
		results, err = svc.ImportJobs(ctx, tx, account, payload, false)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	grew := liveHeap() - before
	t.Logf("the results of %d refused jobs hold %d KB", n, grew>>10)
	if len(results.Errors) != n {
		t.Fatalf("%d errors, want one for each of the %d jobs", len(results.Errors), n)
	}
	// An entry takes a few hundred bytes; the texts it must not hold take
	// n*descriptionSize (16 MB).
	if limit := int64(n * descriptionSize / 4); grew > limit {
		t.Errorf("the results of %d refused jobs hold %d KB, more than %d KB: they keep the jobs' texts",
			n, grew>>10, limit>>10)
	}
	runtime.KeepAlive(results)
	runtime.KeepAlive(payload)
}

// liveHeap is the bytes of live heap objects. The second collection
// empties the pools the first left in their victim caches.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
