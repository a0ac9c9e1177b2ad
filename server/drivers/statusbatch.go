package drivers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/natural"
	"github.com/truckjobs/jobboard/server/store"
)

// MaxStatusBatch is the most entries a batch of statuses takes.
const MaxStatusBatch = 1000

// StatusBatchEntry is one entry of a batch of statuses, as an adapter read
// it: the driver by id (0: none) or by e-mail, the change's parts as text,
// and the problems the adapter found reading it (a changedAt that is no
// time), named as the caller names the fields.
type StatusBatchEntry struct {
	DriverID             int64
	Email                string
	Status, Reason, Note string
	ChangedAt            *time.Time
	Problems             []BatchProblem
}

// BatchProblem is one problem of an entry: the field ("" for the entry as
// a whole), the value sent and the rule.
type BatchProblem struct {
	Field, Value, Message string
}

// StatusBatchResult is what a batch did: its counts, and the problems of
// the entries it did not apply, by entry.
type StatusBatchResult struct {
	Updated, Unchanged, Stale, Errors int
	Problems                          []EntryProblem
}

// EntryProblem is a BatchProblem of the entry at Index, with the driver it
// named or was matched to (0: none) and the e-mail it named.
type EntryProblem struct {
	Index    int
	DriverID int64
	Email    string
	BatchProblem
}

// SetStatuses applies a batch of statuses to the caller's drivers: each
// entry is checked (the rules of SetStatus, named by named), its driver
// found by id or e-mail among the account's applicants, a second entry for
// one driver refused; the valid entries are applied in one transaction
// with their events, in a fixed number of statements.
func (s *Service) SetStatuses(ctx context.Context, entries []StatusBatchEntry, now time.Time, named func(string) string) (StatusBatchResult, error) {
	caller, err := call.From(ctx)
	if err != nil {
		return StatusBatchResult{}, err
	}
	if len(entries) > MaxStatusBatch {
		return StatusBatchResult{}, call.InvalidFieldText("statuses",
			fmt.Sprintf("the batch lists %d entries, more than %d; send the rest in further requests", len(entries), MaxStatusBatch))
	}
	if s.events == nil {
		return StatusBatchResult{}, call.Internal(ctx, errors.New("driver statuses: no outbox for their events"))
	}
	b := statusBatch{entries: entries, named: named, changes: make([]domain.StatusChange, len(entries)),
		drivers: make([]int64, len(entries)), problems: make([][]BatchProblem, len(entries))}
	b.check(now)
	checked := b.problems
	var results []store.StatusResult
	var applied []int // the entry of each update
	err = s.store.InRetriedTx(ctx, "set driver statuses", func(tx *store.Tx) error {
		// A run after a deadlock starts from the checks alone: what the
		// last run found of the drivers may have changed since.
		b.problems = make([][]BatchProblem, len(checked))
		for i := range checked {
			b.problems[i] = slices.Clip(checked[i])
			b.drivers[i] = entries[i].DriverID
		}
		if err := b.findDrivers(ctx, tx, caller.AccountID); err != nil {
			return err
		}
		updates := make([]store.StatusUpdate, 0, len(entries))
		applied = applied[:0]
		for i := range entries {
			if len(b.problems[i]) == 0 {
				updates = append(updates, store.StatusUpdate{DriverID: b.drivers[i], StatusChange: b.changes[i]})
				applied = append(applied, i)
			}
		}
		var err error
		if results, err = tx.SetDriverStatuses(ctx, caller.AccountID, updates); err != nil {
			return err
		}
		var changed []store.StatusChanged
		for k, r := range results {
			if r.Outcome == store.StatusApplied {
				changed = append(changed, store.StatusChanged{DriverID: updates[k].DriverID, StatusChange: updates[k].StatusChange, Previous: r.Previous})
			}
		}
		return s.events.StatusesChanged(ctx, tx, caller.AccountID, changed)
	})
	if err != nil {
		return StatusBatchResult{}, call.Internal(ctx, err)
	}
	return b.result(results, applied), nil
}

// statusBatch is a batch on its way: each entry's change, driver and
// problems.
type statusBatch struct {
	entries  []StatusBatchEntry
	named    func(string) string
	changes  []domain.StatusChange
	drivers  []int64
	problems [][]BatchProblem
}

// check applies the rules to each entry, and which driver it names.
func (b *statusBatch) check(now time.Time) {
	for i, e := range b.entries {
		b.problems[i] = append(b.problems[i], e.Problems...)
		var problems []domain.FieldProblem
		b.changes[i], problems = domain.ReadStatusChange(e.Status, e.Reason, e.Note, e.ChangedAt, now)
		for _, p := range problems {
			b.problems[i] = append(b.problems[i], BatchProblem{b.named(p.Field), p.Value, p.Rule})
		}
		switch {
		case e.DriverID != 0 && e.Email != "":
			b.problems[i] = append(b.problems[i], BatchProblem{"", e.Email,
				fmt.Sprintf("names the driver by %s and by %s: give one of the two", b.named("driverId"), b.named("email"))})
		case e.DriverID < 0:
			b.problems[i] = append(b.problems[i], BatchProblem{b.named("driverId"), strconv.FormatInt(e.DriverID, 10), "is not a driver id"})
		case e.DriverID == 0 && e.Email == "":
			b.problems[i] = append(b.problems[i], BatchProblem{"", "",
				fmt.Sprintf("names no driver: give %s or %s", b.named("driverId"), b.named("email"))})
		}
		b.drivers[i] = e.DriverID
	}
}

// findDrivers matches the entries named by e-mail to the account's
// applicants, then refuses an entry whose driver the account does not
// hold, and a second entry for a driver.
func (b *statusBatch) findDrivers(ctx context.Context, tx *store.Tx, accountID int64) error {
	var keys []string
	for _, e := range b.entries {
		if e.Email != "" {
			keys = append(keys, store.FoldCase(e.Email))
		}
	}
	byEmail, err := tx.DriversByEmail(ctx, accountID, keys)
	if err != nil {
		return err
	}
	seen := map[int64]int{}
	for i, e := range b.entries {
		if e.Email != "" && e.DriverID == 0 {
			b.drivers[i] = byEmail[store.FoldCase(e.Email)]
			if b.drivers[i] == 0 {
				b.problems[i] = append(b.problems[i], BatchProblem{b.named("email"), e.Email, "is not the e-mail of a driver who applied to the account"})
				continue
			}
		}
		if d := b.drivers[i]; d > 0 {
			if first, twice := seen[d]; twice {
				b.problems[i] = append(b.problems[i], BatchProblem{"", "", fmt.Sprintf("is a second entry for driver %d (the first is entry %d)", d, first)})
			} else {
				seen[d] = i
			}
		}
	}
	return nil
}

// result counts the outcomes of the entries applied (applied[k] is the
// entry of results[k]) and lists the problems of the others, in entry
// order. A driver the store did not find (never applied, or another
// account's) is a problem of its entry.
func (b *statusBatch) result(results []store.StatusResult, applied []int) StatusBatchResult {
	var r StatusBatchResult
	for k, res := range results {
		switch res.Outcome {
		case store.StatusApplied:
			r.Updated++
		case store.StatusUnchanged:
			r.Unchanged++
		case store.StatusStale:
			r.Stale++
		case store.StatusNoDriver:
			i := applied[k]
			b.problems[i] = append(b.problems[i], BatchProblem{b.named("driverId"), strconv.FormatInt(b.drivers[i], 10),
				"is not a driver who applied to the account"})
		}
	}
	for i, ps := range b.problems {
		if len(ps) == 0 {
			continue
		}
		r.Errors++
		for _, p := range ps {
			r.Problems = append(r.Problems, EntryProblem{Index: i, DriverID: b.drivers[i], Email: b.entries[i].Email, BatchProblem: p})
		}
	}
	return r
}

// SetDriverStatuses is POST /api/v2.0/driver-statuses.
func (s *Service) SetDriverStatuses(ctx context.Context, req *restv2.SetDriverStatusesRequest) (*restv2.SetDriverStatusesResponse, error) {
	entries := make([]StatusBatchEntry, len(req.GetStatuses()))
	for i, in := range req.GetStatuses() {
		e := StatusBatchEntry{Email: in.GetEmail(), Status: in.GetStatus(), Reason: in.GetReason(), Note: in.GetNote()}
		if in.DriverId != nil {
			id, err := strconv.ParseInt(in.GetDriverId(), 10, 64)
			if err != nil || id <= 0 {
				e.Problems = append(e.Problems, BatchProblem{"driverId", in.GetDriverId(), "is not a driver id: a whole number from 1"})
			} else {
				e.DriverID = id
			}
		}
		if at, bad := restChangedAt(in.ChangedAt); len(bad) > 0 {
			e.Problems = append(e.Problems, BatchProblem{"changedAt", in.GetChangedAt(), notATime})
		} else {
			e.ChangedAt = at
		}
		entries[i] = e
	}
	r, err := s.SetStatuses(ctx, entries, time.Now(), sameName)
	if err != nil {
		return nil, err
	}
	out := &restv2.SetDriverStatusesResponse{Updated: int32(r.Updated), Unchanged: int32(r.Unchanged), Stale: int32(r.Stale),
		Errors: int32(r.Errors), ErrorMessages: make([]*restv2.DriverStatusBatchError, len(r.Problems))}
	for k, p := range r.Problems {
		e := &restv2.DriverStatusBatchError{Index: int32(p.Index), Message: p.Message, Field: natural.NonEmpty(p.Field), Value: natural.NonEmpty(p.Value),
			Email: natural.NonEmpty(p.Email)}
		if p.DriverID > 0 {
			e.DriverId = new(p.DriverID)
		}
		out.ErrorMessages[k] = e
	}
	return out, nil
}
