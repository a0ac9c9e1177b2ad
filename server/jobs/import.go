package jobs

import (
	"context"
	"errors"
	"strings"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/rules"
	"github.com/truckjobs/jobboard/server/store"
)

// ImportChunk is how many of an import's jobs are decoded, checked and
// written at a time: an import of 50,000 jobs is never held whole, decoded
// or checked, and each chunk costs what a post of as many jobs does.
const ImportChunk = 1000

// ImportJobs validates and upserts an import's jobs inside its
// transaction, a chunk at a time, with the rules of a post but no
// 1,000-job limit, then applies deleteJobs. The outcome is the one of
// checking and writing all of them at once: repeated references are found
// across chunks, each chunk's upsert sees the active jobs the earlier ones
// added, and entries carry their index in the import. The next chunk is
// decoded and checked (checkedChunks) while the database writes this one.
// The results are built in the form they are stored in: an import of
// 50,000 jobs over the active-job limit has 40,000 errors, and a second
// form of them beside the first raised the import's peak memory.
func (s *Service) ImportJobs(ctx context.Context, tx *store.Tx, accountID int64, payload store.ImportPayload, deleteJobs bool) (*store.ImportResults, error) {
	res := &store.ImportResults{}
	// Every listed reference is kept, including those of jobs that failed
	// validation: a bad row in a feed must not withdraw its job.
	keep := []string{} // never NULL: NOT (x = ANY(NULL)) would match nothing
	opts := store.UpsertOptions{MaxActive: MaxActiveJobs, Today: s.now()}
	stop := make(chan struct{})
	defer close(stop)
	chunks, finished := s.checkedChunks(payload, stop)
	for c := range chunks {
		outcomes, err := tx.UpsertJobs(ctx, accountID, c.batch.valid, opts)
		if err != nil {
			return nil, err
		}
		added, updated, unchanged := c.batch.count(outcomes)
		res.Added += added
		res.Updated += updated
		res.Unchanged += unchanged
		for _, e := range c.batch.ignoredEntries() {
			res.IgnoredValues = append(res.IgnoredValues, store.ImportIgnoredValue{Index: new(e.Index),
				ReferenceNumber: detached(e.ReferenceNumber), Field: detached(e.Field), Value: detached(e.Value), Message: e.Message})
		}
		for i := range c.batch.inputs {
			in := &c.batch.inputs[i]
			if deleteJobs {
				if ref := strings.TrimSpace(rules.OrEmpty(in.ReferenceNumber)); ref != "" && !strings.ContainsRune(ref, 0) {
					keep = append(keep, ref)
				}
			}
			if len(c.batch.problems[i]) == 0 {
				continue
			}
			e := store.ImportError{Index: int32(c.offset + i), ReferenceNumber: detached(sentReference(in)),
				Messages: make([]string, 0, len(c.batch.problems[i]))}
			for _, p := range c.batch.problems[i] {
				e.Messages = append(e.Messages, p.message)
			}
			res.Errors = append(res.Errors, e)
			res.Failed++
		}
	}
	if err := finished(); err != nil {
		return nil, err
	}
	res.Processed = res.Added + res.Updated + res.Unchanged + res.Failed
	if deleteJobs {
		n, err := tx.DeleteJobsExcept(ctx, accountID, keep)
		if err != nil {
			return nil, err
		}
		res.Deleted = int32(n)
	}
	return res, nil
}

// detached is p's text behind a pointer of its own. A sent value's pointer
// points into the array that holds all of its job's decoded texts
// (store.ImportJob), so an entry that kept it, held until the import
// completes, kept every text of its job: for an import of 50,000 jobs with
// 40,000 refused, some 50 MB more at its peak.
func detached(p *string) *string {
	if p == nil {
		return nil
	}
	return new(*p)
}

// checkedChunk is a chunk of an import's jobs, checked, at its offset.
type checkedChunk struct {
	offset int
	batch  *jobBatch
}

// checkedChunks decodes and checks an import's jobs a chunk at a time, in
// order, on a goroutine of its own, so that the decoding and the checks
// (which use every core) overlap the database's writing of the chunk
// before. One chunk waits at most: three are held at once, the one being
// written, the one waiting and the one being checked. The channel closes
// when the payload is done or stop is closed; finished, called after the
// channel closed, is the payload's error, and raises again on the caller
// a panic of the checks, where the queue's recovery takes it.
func (s *Service) checkedChunks(payload store.ImportPayload, stop <-chan struct{}) (<-chan checkedChunk, func() error) {
	chunks := make(chan checkedChunk, 1)
	var err error
	var panicked any
	go func() {
		defer close(chunks)
		defer func() { panicked = recover() }()
		firstAt := map[string]int{}
		err = importChunks(payload, ImportChunk, func(offset int, jobs []*restv2.JobInput) error {
			c := checkedChunk{offset: offset, batch: s.checkChunk(readTexts(jobs), RESTNames, 0, offset, firstAt, nil)}
			select {
			case chunks <- c:
				return nil
			case <-stop:
				return errImportStopped
			}
		})
	}()
	return chunks, func() error {
		if panicked != nil {
			panic(panicked)
		}
		return err
	}
}

// errImportStopped ends the checks of an import whose writing failed.
var errImportStopped = errors.New("import stopped")
