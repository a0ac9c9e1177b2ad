package server

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	jobboardv2 "jobboard/gen/jobboard/v2"
	"jobboard/server/store"
)

// The limits of contract section 4.
const (
	// MaxJobsPerPost is how many jobs one post processes; the rest are limit errors.
	MaxJobsPerPost = 1000
	// MaxActiveJobs is the most active jobs an account may have.
	MaxActiveJobs = 10_000
	// MaxListItems bounds the jobs of a post and the ids or references of a
	// delete: beyond it the summary would only grow, so the call is refused.
	MaxListItems = 10_000
)

// tooManyItems refuses a request listing more than MaxListItems.
func tooManyItems(n int) error {
	if n <= MaxListItems {
		return nil
	}
	return status.Errorf(codes.InvalidArgument, "the request lists %d items, more than %d; a post processes the first %d jobs, so send the rest in further requests", n, MaxListItems, MaxJobsPerPost)
}

// JobService implements jobboard.v2.JobService.
type JobService struct {
	jobboardv2.UnimplementedJobServiceServer
	store     *store.Store
	validator *jobValidator
	now       func() time.Time
}

// NewJobService returns the job service over st; now is the clock that dates
// added jobs (time.Now in production).
func NewJobService(st *store.Store, now func() time.Time) *JobService {
	return &JobService{store: st, validator: newJobValidator(), now: now}
}

// ListJobs returns the account's active jobs ordered by id.
func (s *JobService) ListJobs(ctx context.Context, _ *jobboardv2.ListJobsRequest) (*jobboardv2.ListJobsResponse, error) {
	caller, err := callerFrom(ctx)
	if err != nil {
		return nil, err
	}
	jobs, err := s.store.ListJobs(ctx, caller.AccountID)
	if err != nil {
		return nil, internalError(ctx, err)
	}
	out := &jobboardv2.ListJobsResponse{Jobs: make([]*jobboardv2.Job, len(jobs))}
	for i := range jobs {
		out.Jobs[i] = jobMessage(&jobs[i])
	}
	return out, nil
}

// GetJob returns one active job of the account.
func (s *JobService) GetJob(ctx context.Context, req *jobboardv2.GetJobRequest) (*jobboardv2.GetJobResponse, error) {
	caller, err := callerFrom(ctx)
	if err != nil {
		return nil, err
	}
	j, err := s.store.Job(ctx, caller.AccountID, req.GetId())
	if errors.Is(err, store.ErrNotFound) {
		return nil, status.Errorf(codes.NotFound, "job %d not found", req.GetId())
	}
	if err != nil {
		return nil, internalError(ctx, err)
	}
	return &jobboardv2.GetJobResponse{Job: jobMessage(&j)}, nil
}

// PostJobs validates the jobs and upserts the valid ones in one transaction.
func (s *JobService) PostJobs(ctx context.Context, req *jobboardv2.PostJobsRequest) (*jobboardv2.PostJobsResponse, error) {
	caller, err := callerFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := tooManyItems(len(req.GetJobs())); err != nil {
		return nil, err
	}
	sum := newSummary()
	resp := &jobboardv2.PostJobsResponse{Summary: sum.BatchSummary, IgnoredValues: []*jobboardv2.BatchEntry{}}

	var (
		valid   []store.JobFields
		indexOf []int // request index of each valid job
		firstAt = map[string]int{}
	)
	for i, in := range req.GetJobs() {
		entry := func(field string, value *string, message string) *jobboardv2.BatchEntry {
			return &jobboardv2.BatchEntry{Index: int32p(i), ReferenceNumber: echoed(in.ReferenceNumber),
				Field: optional(field), Value: echoed(value), Message: message}
		}
		if i >= MaxJobsPerPost {
			sum.add(&sum.ErrorMessages.LimitErrors, entry("", nil,
				fmt.Sprintf("only the first %d jobs of a post are processed; the job at index %d was not", MaxJobsPerPost, i)))
			continue
		}
		ref := strings.TrimSpace(in.GetReferenceNumber())
		if first, seen := firstAt[ref]; seen && ref != "" {
			sum.add(&sum.ErrorMessages.DuplicationErrors, entry("referenceNumber", in.ReferenceNumber,
				fmt.Sprintf("referenceNumber %s already appears at index %d of this request; only its first occurrence is processed", quoted(ref), first)))
			continue
		}
		firstAt[ref] = i
		fields, problems, ignored := s.validator.check(in)
		for _, ig := range ignored {
			resp.IgnoredValues = append(resp.IgnoredValues, entry(ig.field, ig.value, ig.message))
		}
		for _, p := range problems {
			list := &sum.ErrorMessages.InvalidErrors
			if p.kind == missingProblem {
				list = &sum.ErrorMessages.MissingErrors
			}
			sum.add(list, entry(p.field, p.value, p.message))
		}
		if len(problems) == 0 {
			valid = append(valid, fields)
			indexOf = append(indexOf, i)
		}
	}

	outcomes, err := s.store.UpsertJobs(ctx, caller.AccountID, valid, store.UpsertOptions{MaxActive: MaxActiveJobs, Today: s.now()})
	if err != nil {
		return nil, internalError(ctx, err)
	}
	for k, o := range outcomes {
		switch o {
		case store.Added:
			sum.Added++
		case store.Updated:
			sum.Updated++
		case store.Unchanged:
			sum.Unchanged++
		case store.OverActiveLimit:
			i := indexOf[k]
			in := req.Jobs[i]
			sum.add(&sum.ErrorMessages.LimitErrors, &jobboardv2.BatchEntry{Index: int32p(i), ReferenceNumber: echoed(in.ReferenceNumber),
				Message: fmt.Sprintf("the account has reached its maximum of %d active jobs; job %s was not added", MaxActiveJobs, valid[k].ReferenceNumber)})
		}
	}
	return resp, nil
}

// DeleteJob withdraws one job by id.
func (s *JobService) DeleteJob(ctx context.Context, req *jobboardv2.DeleteJobRequest) (*jobboardv2.DeleteJobResponse, error) {
	sum, err := s.deleteByID(ctx, []string{req.GetId()}, false)
	return &jobboardv2.DeleteJobResponse{Summary: sum}, err
}

// DeleteJobs withdraws several jobs by id.
func (s *JobService) DeleteJobs(ctx context.Context, req *jobboardv2.DeleteJobsRequest) (*jobboardv2.DeleteJobsResponse, error) {
	sum, err := s.deleteByID(ctx, req.GetIds(), true)
	return &jobboardv2.DeleteJobsResponse{Summary: sum}, err
}

// DeleteJobByReference withdraws one job by reference number.
func (s *JobService) DeleteJobByReference(ctx context.Context, req *jobboardv2.DeleteJobByReferenceRequest) (*jobboardv2.DeleteJobByReferenceResponse, error) {
	sum, err := s.deleteByReference(ctx, []string{req.GetReferenceNumber()}, false)
	return &jobboardv2.DeleteJobByReferenceResponse{Summary: sum}, err
}

// DeleteJobsByReference withdraws several jobs by reference number.
func (s *JobService) DeleteJobsByReference(ctx context.Context, req *jobboardv2.DeleteJobsByReferenceRequest) (*jobboardv2.DeleteJobsByReferenceResponse, error) {
	sum, err := s.deleteByReference(ctx, req.GetReferenceNumbers(), true)
	return &jobboardv2.DeleteJobsByReferenceResponse{Summary: sum}, err
}

// deleteByID deletes the jobs named by ids; listed says whether the request
// was a list, whose entries then carry their index.
func (s *JobService) deleteByID(ctx context.Context, ids []string, listed bool) (*jobboardv2.BatchSummary, error) {
	return deleteJobs(ctx, ids, listed, jobKey[int64]{
		parse: func(raw string) (int64, string) {
			id, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
			if err != nil {
				return 0, quoted(raw) + " is not a job id (an integer)"
			}
			return id, ""
		},
		name:     func(e *jobboardv2.BatchEntry, id int64) { e.Id = &id },
		describe: func(id int64) string { return fmt.Sprintf("job %d", id) },
		remove:   s.store.DeleteJobsByID,
	})
}

// deleteByReference deletes the jobs named by reference numbers.
func (s *JobService) deleteByReference(ctx context.Context, refs []string, listed bool) (*jobboardv2.BatchSummary, error) {
	return deleteJobs(ctx, refs, listed, jobKey[string]{
		parse: func(raw string) (string, string) {
			ref := strings.TrimSpace(raw)
			if ref == "" || strings.ContainsRune(ref, 0) {
				return "", quoted(raw) + " is not a reference number (1-64 letters and digits)"
			}
			return ref, ""
		},
		name:     func(e *jobboardv2.BatchEntry, ref string) { e.ReferenceNumber = &ref },
		describe: func(ref string) string { return "job with referenceNumber " + quoted(ref) },
		remove:   s.store.DeleteJobsByReference,
	})
}

// jobKey is how one form of delete names jobs: by id or by reference.
type jobKey[K comparable] struct {
	// parse reads a key as sent, or returns why it is not one.
	parse func(raw string) (K, string)
	// name sets the key on an entry.
	name func(e *jobboardv2.BatchEntry, key K)
	// describe names the job in messages.
	describe func(key K) string
	// remove deletes the account's active jobs with these keys and returns
	// the keys it deleted.
	remove func(ctx context.Context, accountID int64, keys []K) ([]K, error)
}

// deleteJobs deletes the jobs named in raw with one statement: unreadable
// keys are invalid, repeats are duplicates, and keys with no active job of
// the caller's account are missing.
func deleteJobs[K comparable](ctx context.Context, raw []string, listed bool, k jobKey[K]) (*jobboardv2.BatchSummary, error) {
	caller, err := callerFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := tooManyItems(len(raw)); err != nil {
		return nil, err
	}
	sum := newSummary()
	entry := func(i int, key K, message string) *jobboardv2.BatchEntry {
		e := &jobboardv2.BatchEntry{Index: indexIf(listed, i), Message: message}
		k.name(e, key)
		return e
	}
	var wanted []K
	var at []int
	firstAt := map[K]int{}
	for i, r := range raw {
		key, invalid := k.parse(r)
		if invalid != "" {
			sum.add(&sum.ErrorMessages.InvalidErrors, &jobboardv2.BatchEntry{Index: indexIf(listed, i), Value: echoed(&raw[i]), Message: invalid})
			continue
		}
		if first, seen := firstAt[key]; seen {
			sum.add(&sum.ErrorMessages.DuplicationErrors, entry(i, key,
				fmt.Sprintf("%s already appears at index %d of this request", k.describe(key), first)))
			continue
		}
		firstAt[key] = i
		wanted = append(wanted, key)
		at = append(at, i)
	}
	deleted, err := k.remove(ctx, caller.AccountID, wanted)
	if err != nil {
		return nil, internalError(ctx, err)
	}
	gone := make(map[K]bool, len(deleted))
	for _, key := range deleted {
		gone[key] = true
	}
	for n, key := range wanted {
		if !gone[key] {
			sum.add(&sum.ErrorMessages.MissingErrors, entry(at[n], key, k.describe(key)+" not found"))
		}
	}
	sum.Deleted = int32(len(deleted))
	return sum.BatchSummary, nil
}

// summary builds a BatchSummary whose error count follows its entries.
type summary struct{ *jobboardv2.BatchSummary }

func newSummary() summary {
	return summary{&jobboardv2.BatchSummary{ErrorMessages: &jobboardv2.ErrorMessages{
		MissingErrors:     &jobboardv2.ErrorList{},
		InvalidErrors:     &jobboardv2.ErrorList{},
		DuplicationErrors: &jobboardv2.ErrorList{},
		LimitErrors:       &jobboardv2.ErrorList{},
	}}}
}

func (s summary) add(list **jobboardv2.ErrorList, e *jobboardv2.BatchEntry) {
	(*list).Errors = append((*list).Errors, e)
	s.Errors++
}

// jobMessage maps a stored job to its API form.
func jobMessage(j *store.Job) *jobboardv2.Job {
	return &jobboardv2.Job{
		Id: j.ID, Date: j.PostedOn, ReferenceNumber: j.ReferenceNumber, Title: j.Title, City: j.City,
		State: j.State, PostalCode: j.PostalCode, DriverType: j.DriverType, Preference: j.Preference,
		FreightType: j.FreightType, PayAmountMin: j.PayAmountMin, PayAmountMax: j.PayAmountMax,
		PayFrequency: j.PayFrequency, EmploymentType: j.EmploymentType, RouteType: j.RouteType,
		Description: j.Description, Requirements: j.Requirements, TwicOnly: j.TwicOnly, LicenseClass: j.LicenseClass,
	}
}

func int32p(i int) *int32 { v := int32(i); return &v }

func indexIf(listed bool, i int) *int32 {
	if !listed {
		return nil
	}
	return int32p(i)
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
