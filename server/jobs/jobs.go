package jobs

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/truckjobs/jobboard/domain"
	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/parallel"
	"github.com/truckjobs/jobboard/internal/rules"
	"github.com/truckjobs/jobboard/server/call"
	"github.com/truckjobs/jobboard/server/pagetoken"
	"github.com/truckjobs/jobboard/server/store"
)

// MaxActiveJobs is the most active jobs an account may have (docs/api.md,
// Jobs; the limits of a request are in internal/rules).
const MaxActiveJobs = 10_000

// tooManyItems refuses a request whose list field holds more than
// rules.MaxListItems; limit says, for the request's kind, what it takes.
func tooManyItems(field string, n int, limit string) error {
	if n <= rules.MaxListItems {
		return nil
	}
	return call.InvalidArgument(call.FieldViolation{Field: field, Description: fmt.Sprintf(
		"the request lists %d items, more than %d; %s, so send the rest in further requests",
		n, rules.MaxListItems, limit)})
}

// What a post and a delete take, for the refusal of a longer list.
var (
	postLimit   = fmt.Sprintf("a post processes the first %d jobs", rules.MaxJobsPerPost)
	deleteLimit = fmt.Sprintf("a delete takes at most %d ids or reference numbers", rules.MaxListItems)
)

// Service implements jobboard.v2.Service.
type Service struct {
	restv2.UnimplementedJobServiceServer
	store     *store.Store
	validator *jobValidator
	now       func() time.Time
	// tokens signs the page tokens of ListJobs; NewServices gives it the
	// database's key, so every replica reads every replica's tokens.
	tokens pagetoken.Signer
}

// New returns the job service over st; now is the clock that dates
// added jobs (time.Now in production).
func New(st *store.Store, now func() time.Time) *Service {
	// The build's digest (a read of the executable) is made meanwhile,
	// not by the first post.
	go buildDigest()
	return &Service{store: st, validator: newJobValidator(), now: now}
}

// UseTokens signs and reads the jobs list's page tokens with t; until it
// is called a page token is refused. NewServices gives every list the
// database's key, so every replica reads every replica's tokens.
func (s *Service) UseTokens(t pagetoken.Signer) { s.tokens = t }

// Tokens is the signer of the page tokens, for the other lists to share.
func (s *Service) Tokens() pagetoken.Signer { return s.tokens }

// Paging of ListJobs (docs/api.md, Jobs).
const (
	defaultJobsPage = 100
	maxJobsPage     = 1000
	// jobsPageBytes bounds the jobs of one page, by the size of their
	// texts: a page answered over gRPC stays under the 4 MiB clients take by
	// default, and a list streamed over REST holds one page at a time.
	jobsPageBytes = 2 << 20
	// wholeListPage is the most jobs a page of the whole list takes after
	// its first (EachOfWholeListPage), which takes maxJobsPage;
	// jobsPageBytes cuts it first unless the jobs are small. Each page
	// costs PostgreSQL the start of a query (1.3 ms for 1,000 jobs in psql,
	// against 10.5 ms for 10,000 in one), so the whole list reads few large
	// pages: 10,000 jobs read 1,000 at a time took 138-156 ms in process,
	// 102-113 ms in pages of up to 10,000 (BenchmarkListJobsREST).
	wholeListPage = 10_000
	// weighedPageBytes bounds a page of the whole list after its first
	// (EachOfWholeListPage), whose number of jobs is guessed to hold about
	// jobsPageBytes: a quarter more lets jobs a little larger than the
	// guessed ones still fill the page.
	weighedPageBytes = jobsPageBytes + jobsPageBytes/4
)

// jobsTokenScope is the scope of the jobs list's page tokens: the list has
// no filters and one order, and the position is the last id answered.
const jobsTokenScope = "jobs"

// ListJobs returns a page of the account's active jobs ordered by id.
func (s *Service) ListJobs(ctx context.Context, req *restv2.ListJobsRequest) (*restv2.ListJobsResponse, error) {
	page, next, err := s.Page(ctx, req.GetPageSize(), req.GetPageToken())
	if err != nil {
		return nil, err
	}
	return listResponse(page, next), nil
}

// listResponse is a page of jobs and the token of the next.
func listResponse(page []domain.Job, next string) *restv2.ListJobsResponse {
	out := &restv2.ListJobsResponse{Jobs: make([]*restv2.Job, len(page)), NextPageToken: next}
	for i := range page {
		out.Jobs[i] = jobMessage(&page[i])
	}
	return out
}

// Page reads a page of the account's active jobs ordered by id: at most
// pageSize (0: the default), from where pageToken says (""; the first),
// and the token of the page after it ("" on the last).
func (s *Service) Page(ctx context.Context, pageSize int32, pageToken string) ([]domain.Job, string, error) {
	size, err := call.PageSize(pageSize, defaultJobsPage, maxJobsPage, "jobs")
	if err != nil {
		return nil, "", err
	}
	return s.page(ctx, size, pageToken)
}

// page is Page of a valid size.
func (s *Service) page(ctx context.Context, size int, pageToken string) ([]domain.Job, string, error) {
	// Made once, at the size a page takes.
	jobs := make([]domain.Job, 0, size)
	next, err := s.eachOfPage(ctx, size, pageToken, func(j *domain.Job) error {
		jobs = append(jobs, *j)
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return jobs, next, nil
}

// eachOfPage reads the page of size after pageToken, handing each job to
// each (the job is read into the same place each time), and returns the
// next page's token.
func (s *Service) eachOfPage(ctx context.Context, size int, pageToken string, each func(*domain.Job) error) (string, error) {
	caller, err := call.From(ctx)
	if err != nil {
		return "", err
	}
	var after int64
	if pageToken != "" {
		after, err = s.tokens.DecodeID(pageToken, caller.AccountID, jobsTokenScope)
		if err != nil || after <= 0 {
			return "", unansweredToken(pageToken)
		}
	}
	var last int64
	end, err := s.store.EachJobOfPage(ctx, caller.AccountID, after, size, jobsPageBytes, func(j *domain.Job) error {
		last = j.ID
		return each(j)
	})
	if err != nil {
		return "", call.Internal(ctx, err)
	}
	var next string
	if end.More {
		next = s.tokens.EncodeID(caller.AccountID, jobsTokenScope, last)
	}
	return next, nil
}

// unansweredToken refuses a page token of the jobs lists that this
// service did not answer for the caller and the list.
func unansweredToken(pageToken string) error {
	return call.InvalidFieldText("page_token", call.Quoted(pageToken)+" is not a next_page_token this service answered")
}

// GetJob returns one active job of the account.
func (s *Service) GetJob(ctx context.Context, req *restv2.GetJobRequest) (*restv2.GetJobResponse, error) {
	j, err := s.Job(ctx, req.GetId())
	if err != nil {
		return nil, err
	}
	return &restv2.GetJobResponse{Job: jobMessage(&j)}, nil
}

// Job reads one active job of the account.
func (s *Service) Job(ctx context.Context, id int64) (domain.Job, error) {
	return call.AccountRecord(ctx, func() string { return fmt.Sprintf("job %d", id) }, func(accountID int64) (domain.Job, error) {
		return s.store.Job(ctx, accountID, id)
	})
}

// PostJobs validates the jobs of the v2.0 text form and upserts the valid
// ones in one transaction.
func (s *Service) PostJobs(ctx context.Context, req *restv2.PostJobsRequest) (*restv2.PostJobsResponse, error) {
	if _, err := call.From(ctx); err != nil {
		return nil, err
	}
	if err := CheckPostLength(len(req.GetJobs())); err != nil {
		return nil, err
	}
	// The texts are read while the store starts: the references are the
	// messages' as sent, which reading them keeps. The digests of the
	// first rules.MaxJobsPerPost, one per reference, tell the store which
	// jobs are sent as they were last posted; they are taken while the
	// store begins its transaction and locks the account, two round trips
	// that took 0.4 ms of a post of 1,000 unchanged jobs, after hashing
	// that took 0.6 ms.
	sent := req.GetJobs()
	refs := sentReferences(len(sent), func(i int) *string { return sent[i].ReferenceNumber })
	digests := sync.OnceValue(func() [][]byte { return inputDigests(sent[:len(refs)]) })
	go digests()
	r, err := s.post(ctx, refs, digests, func() []Input { return readTexts(sent) }, RESTNames)
	if err != nil {
		return nil, err
	}
	sum := newSummary()
	for l, list := range r.Problems {
		for _, e := range list {
			sum.add(sum.list(problemList(l)), restEntry(e))
		}
	}
	ignored := make([]*restv2.BatchEntry, len(r.Ignored))
	for i, e := range r.Ignored {
		ignored[i] = restEntry(e)
	}
	return &restv2.PostJobsResponse{Unchanged: r.Unchanged, Updated: r.Updated, Added: r.Added,
		Errors: sum.Errors, ErrorMessages: sum.ErrorMessages, IgnoredValues: ignored}, nil
}

// readTexts reads jobs of the v2.0 text form on every core, as the rules
// then check them: read one after the other, a post's 1,000 jobs waited on
// one core before the checks began.
func readTexts(jobs []*restv2.JobInput) []Input {
	inputs := make([]Input, len(jobs))
	parallel.For(len(jobs), func(i int) { inputs[i] = ReadText(jobs[i]) })
	return inputs
}

// CheckPostLength refuses a post of more than rules.MaxListItems jobs, in
// the words both APIs answer.
func CheckPostLength(n int) error { return tooManyItems("jobs", n, postLimit) }

// Entry is a problem or an ignored value of one submitted job, in the
// words of the caller's API.
type Entry struct {
	// Index is the job's index in the request.
	Index                  int32
	ReferenceNumber, Field *string
	Value                  *string
	Message                string
}

// PostResult is what a post did: its counts, and its entries.
type PostResult struct {
	Added, Updated, Unchanged int32
	// Problems are the entries of the jobs not saved, by list: missing,
	// invalid, duplicated, over a limit (problemList's order).
	Problems [4][]Entry
	// Ignored are the values the saved and refused jobs sent in vain.
	Ignored []Entry
}

// Post validates the jobs an adapter read, naming their fields as names
// does, and upserts the valid ones in one transaction. Jobs past
// rules.MaxJobsPerPost are refused; the adapter refuses a longer list.
func (s *Service) Post(ctx context.Context, jobs []Input, names Naming) (PostResult, error) {
	refs := sentReferences(len(jobs), func(i int) *string { return jobs[i].ReferenceNumber })
	return s.post(ctx, refs, nil, func() []Input { return jobs }, names)
}

// post is Post of the jobs read returns, whose references as sent are
// refs (those of the first rules.MaxJobsPerPost) and whose input digests
// digests returns (nil, or one per reference, see inputDigests; a nil
// func for none): read runs while the store locks the account and reads
// its jobs.
func (s *Service) post(ctx context.Context, refs []string, digests func() [][]byte, read func() []Input, names Naming) (PostResult, error) {
	caller, err := call.From(ctx)
	if err != nil {
		return PostResult{}, err
	}
	// The jobs are read and checked while the store locks the account and
	// reads its jobs of the references sent, which the checks only trim: a
	// post of 1,000 unchanged jobs took 17.0-22.1 ms checked first,
	// 15.4-16.3 ms so and with checkChunk's slice made to size
	// (BenchmarkPostJobsREST). A panic in the checks is raised again on
	// the request's goroutine, whose recovery answers it.
	//
	// With digests, the checks wait for the store to tell which jobs are
	// sent as they were last posted (unchanged, and left unchecked); told
	// closes when it has, or when the store failed before.
	var unchanged []bool
	told := make(chan struct{})
	tell := sync.OnceFunc(func() { close(told) })
	checked := make(chan checkedPost, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				checked <- checkedPost{panicked: p}
			}
		}()
		jobs := read()
		var sums [][]byte
		if digests != nil {
			<-told
			sums = digests()
		}
		checked <- checkedPost{batch: s.checkPost(jobs, names, unchanged, sums)}
	}()
	var batch *jobBatch
	outcomes, err := s.store.UpsertJobsWhileChecked(ctx, caller.AccountID, refs, digests,
		func(same []bool) { unchanged = same; tell() },
		func() store.Checked {
			c := <-checked
			if c.panicked != nil {
				panic(c.panicked)
			}
			batch = c.batch
			return store.Checked{Jobs: batch.valid, Digests: batch.digests}
		}, store.UpsertOptions{MaxActive: MaxActiveJobs, Today: s.now()})
	tell()
	if err != nil {
		return PostResult{}, call.Internal(ctx, err)
	}
	var r PostResult
	r.Added, r.Updated, r.Unchanged = batch.count(outcomes)
	for i := range batch.inputs {
		for _, p := range batch.problems[i] {
			r.Problems[p.list] = append(r.Problems[p.list], batch.entry(i, p.field, p.value, p.message))
		}
	}
	r.Ignored = batch.ignoredEntries()
	return r, nil
}

// checkedPost is the checked jobs of a post, or the panic of their checks.
type checkedPost struct {
	batch    *jobBatch
	panicked any
}

// sentReferences are the trimmed reference numbers of the first
// rules.MaxJobsPerPost of n jobs, as the checks read them; ref is the i-th
// job's as sent.
func sentReferences(n int, ref func(i int) *string) []string {
	refs := make([]string, 0, min(n, rules.MaxJobsPerPost))
	for i := range min(n, rules.MaxJobsPerPost) {
		refs = append(refs, strings.TrimSpace(rules.OrEmpty(ref(i))))
	}
	return refs
}

// restEntry is an entry of the v2.0 API.
func restEntry(e Entry) *restv2.BatchEntry {
	return &restv2.BatchEntry{Index: &e.Index, ReferenceNumber: e.ReferenceNumber, Field: e.Field, Value: e.Value, Message: e.Message}
}

// problemList names the summary list a problem belongs to.
type problemList int

const (
	missingList problemList = iota
	invalidList
	duplicationList
	limitList
)

// jobProblem is one reason a submitted job was not saved.
type jobProblem struct {
	list    problemList
	field   string
	value   *string
	message string
}

// jobBatch is a checked list of submitted jobs: the valid ones ready for
// the store, and every problem and ignored value by request index. A post
// and an import share it and differ only in how they report.
type jobBatch struct {
	inputs []Input
	names  Naming
	// offset is the request index of inputs[0]: an import is checked a
	// chunk at a time.
	offset  int
	valid   []domain.JobFields
	indexOf []int // request index of each valid job
	// digests are the valid jobs' input digests, to store with them (nil
	// for none).
	digests  [][]byte
	problems [][]jobProblem
	ignored  [][]ignoredField
	// unchanged counts the jobs left unchecked as the store found them
	// sent as they were last posted.
	unchanged int
}

// checkPost validates a post's jobs. Jobs past rules.MaxJobsPerPost and
// repeats of a reference number are problems without being validated;
// those the store found unchanged (by index; nil for none) are counted
// as such, unchecked: sent as they were last posted, they would pass
// their checks as they did then, to the same stored job. The valid jobs
// keep their input digests (digests, by index; nil for none) when
// nothing they sent was ignored.
func (s *Service) checkPost(jobs []Input, names Naming, unchanged []bool, digests [][]byte) *jobBatch {
	b := s.checkChunk(jobs, names, rules.MaxJobsPerPost, 0, make(map[string]int, len(jobs)), unchanged)
	if digests == nil {
		return b
	}
	b.digests = make([][]byte, len(b.valid))
	for k, i := range b.indexOf {
		if len(b.ignored[i]) == 0 {
			b.digests[k] = digests[i]
		}
	}
	return b
}

// checkChunk validates the jobs of a request from its index offset on.
// Jobs past maxProcessed (0: no limit) and repeats of a reference number
// are problems without being validated; firstAt holds the request index
// of each reference number seen in the request's earlier chunks, and
// gains those of this one. The jobs unchanged[i] says are unchanged (nil:
// none) are counted, unchecked, once the per-post limit and the repeated
// references have been told.
func (s *Service) checkChunk(jobs []Input, names Naming, maxProcessed, offset int, firstAt map[string]int, unchanged []bool) *jobBatch {
	b := &jobBatch{inputs: jobs, names: names, offset: offset, problems: make([][]jobProblem, len(jobs)), ignored: make([][]ignoredField, len(jobs))}
	// First the cheap, order-dependent rules (the per-post limit, repeated
	// reference numbers), then the field rules, which are independent per
	// job and dominated by HTML sanitising, on every core.
	var toCheck []int
	for i, in := range jobs {
		if maxProcessed > 0 && offset+i >= maxProcessed {
			b.problems[i] = []jobProblem{{list: limitList,
				message: fmt.Sprintf("only the first %d jobs of a post are processed; the job at index %d was not", maxProcessed, offset+i)}}
			continue
		}
		ref := strings.TrimSpace(rules.OrEmpty(in.ReferenceNumber))
		if first, seen := firstAt[ref]; seen && ref != "" {
			name := names.Names[fieldReferenceNumber]
			b.problems[i] = []jobProblem{{list: duplicationList, field: name, value: in.Sent[fieldReferenceNumber],
				message: fmt.Sprintf("%s %s already appears at index %d of this request; only its first occurrence is processed", name, call.Quoted(ref), first)}}
			continue
		}
		firstAt[ref] = offset + i
		if unchanged != nil && unchanged[i] {
			b.unchanged++
			continue
		}
		toCheck = append(toCheck, i)
	}
	type checked struct {
		fields   domain.JobFields
		problems []fieldProblem
	}
	// One result for each job checked, by its place in toCheck: sized
	// by all the jobs, a post found unchanged throughout made and cleared
	// 300 KB for none.
	results := make([]checked, len(toCheck))
	parallel.For(len(toCheck), func(k int) {
		i := toCheck[k]
		var r checked
		r.fields, r.problems, b.ignored[i] = s.validator.checkInput(jobs[i], names)
		results[k] = r
	})
	// Made to size: grown by append, the valid jobs (large structs) were
	// copied over and over, three quarters of a megabyte a post of 1,000.
	b.valid, b.indexOf = make([]domain.JobFields, 0, len(toCheck)), make([]int, 0, len(toCheck))
	for k, i := range toCheck {
		r := results[k]
		for _, p := range r.problems {
			list := invalidList
			if p.kind == missingProblem {
				list = missingList
			}
			b.problems[i] = append(b.problems[i], jobProblem{list: list, field: p.field, value: p.value, message: p.message})
		}
		if len(r.problems) == 0 {
			b.valid = append(b.valid, r.fields)
			b.indexOf = append(b.indexOf, i)
		}
	}
	return b
}

// count counts the store's outcomes; a job over the active-job maximum
// becomes a limit problem of its request index.
func (b *jobBatch) count(outcomes []store.Outcome) (added, updated, unchanged int32) {
	unchanged = int32(b.unchanged)
	for k, o := range outcomes {
		switch o {
		case store.Added:
			added++
		case store.Updated:
			updated++
		case store.Unchanged:
			unchanged++
		case store.OverActiveLimit:
			i := b.indexOf[k]
			b.problems[i] = append(b.problems[i], jobProblem{list: limitList,
				message: fmt.Sprintf("the account has reached its maximum of %d active jobs; job %s was not added", MaxActiveJobs, b.valid[k].ReferenceNumber)})
		}
	}
	return added, updated, unchanged
}

// entry is a post-style entry about job i of the batch.
func (b *jobBatch) entry(i int, field string, value *string, message string) Entry {
	return Entry{Index: int32(b.offset + i), ReferenceNumber: sentReference(&b.inputs[i]),
		Field: optional(field), Value: call.Echoed(value), Message: message}
}

// sentReference is the job's reference number as entries show it: null
// when it was missing, which a blank one counts as (docs/api.md, Jobs).
func sentReference(in *Input) *string {
	if strings.TrimSpace(rules.OrEmpty(in.ReferenceNumber)) == "" {
		return nil
	}
	return call.Echoed(in.Sent[fieldReferenceNumber])
}

// ignoredEntries lists the ignored values in request order.
func (b *jobBatch) ignoredEntries() []Entry {
	out := []Entry{}
	for i := range b.inputs {
		for _, ig := range b.ignored[i] {
			out = append(out, b.entry(i, ig.field, ig.value, ig.message))
		}
	}
	return out
}

// DeleteJob withdraws one job by id.
func (s *Service) DeleteJob(ctx context.Context, req *restv2.DeleteJobRequest) (*restv2.DeleteJobResponse, error) {
	sum, err := s.deleteByID(ctx, []string{req.GetId()}, false)
	return &restv2.DeleteJobResponse{Summary: sum}, err
}

// DeleteJobs withdraws several jobs by id.
func (s *Service) DeleteJobs(ctx context.Context, req *restv2.DeleteJobsRequest) (*restv2.DeleteJobsResponse, error) {
	sum, err := s.deleteByID(ctx, req.GetIds(), true)
	return &restv2.DeleteJobsResponse{Summary: sum}, err
}

// DeleteJobByReference withdraws one job by reference number.
func (s *Service) DeleteJobByReference(ctx context.Context, req *restv2.DeleteJobByReferenceRequest) (*restv2.DeleteJobByReferenceResponse, error) {
	sum, err := s.deleteByReference(ctx, []string{req.GetReferenceNumber()}, false)
	return &restv2.DeleteJobByReferenceResponse{Summary: sum}, err
}

// DeleteJobsByReference withdraws several jobs by reference number.
func (s *Service) DeleteJobsByReference(ctx context.Context, req *restv2.DeleteJobsByReferenceRequest) (*restv2.DeleteJobsByReferenceResponse, error) {
	sum, err := s.deleteByReference(ctx, req.GetReferenceNumbers(), true)
	return &restv2.DeleteJobsByReferenceResponse{Summary: sum}, err
}

// deleteByID deletes the jobs named by ids; listed says whether the request
// was a list, whose entries then carry their index.
func (s *Service) deleteByID(ctx context.Context, ids []string, listed bool) (*restv2.BatchSummary, error) {
	return deleteJobs(ctx, ids, listed, jobKey[int64]{
		field: "ids",
		parse: func(raw string) (int64, string) {
			id, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
			if err != nil {
				return 0, call.Quoted(raw) + " is not a job id (an integer)"
			}
			return id, ""
		},
		name:     func(e *restv2.BatchEntry, id int64) { e.Id = &id },
		describe: func(id int64) string { return fmt.Sprintf("job %d", id) },
		remove:   s.store.DeleteJobsByID,
	})
}

// deleteByReference deletes the jobs named by reference numbers.
func (s *Service) deleteByReference(ctx context.Context, refs []string, listed bool) (*restv2.BatchSummary, error) {
	return deleteJobs(ctx, refs, listed, jobKey[string]{
		field: "reference_numbers",
		parse: func(raw string) (string, string) {
			ref := strings.TrimSpace(raw)
			if ref == "" || strings.ContainsRune(ref, 0) {
				return "", call.Quoted(raw) + " is not a reference number (1-64 letters and digits)"
			}
			return ref, ""
		},
		name:     func(e *restv2.BatchEntry, ref string) { e.ReferenceNumber = &ref },
		describe: func(ref string) string { return "job with referenceNumber " + call.Quoted(ref) },
		remove:   s.store.DeleteJobsByReference,
	})
}

// jobKey is how one form of delete names jobs: by id or by reference.
type jobKey[K comparable] struct {
	// field is the request's list of keys.
	field string
	// parse reads a key as sent, or returns why it is not one.
	parse func(raw string) (K, string)
	// name sets the key on an entry.
	name func(e *restv2.BatchEntry, key K)
	// describe names the job in messages.
	describe func(key K) string
	// remove deletes the account's active jobs with these keys and returns
	// the keys it deleted.
	remove func(ctx context.Context, accountID int64, keys []K) ([]K, error)
}

// deleteJobs deletes the jobs named in raw with one statement: unreadable
// keys are invalid, repeats are duplicates, and keys with no active job of
// the caller's account are missing.
func deleteJobs[K comparable](ctx context.Context, raw []string, listed bool, k jobKey[K]) (*restv2.BatchSummary, error) {
	caller, err := call.From(ctx)
	if err != nil {
		return nil, err
	}
	if err := tooManyItems(k.field, len(raw), deleteLimit); err != nil {
		return nil, err
	}
	sum := newSummary()
	entry := func(i int, key K, message string) *restv2.BatchEntry {
		e := &restv2.BatchEntry{Index: indexIf(listed, i), Message: message}
		k.name(e, key)
		return e
	}
	var wanted []K
	var at []int
	firstAt := map[K]int{}
	for i, r := range raw {
		key, invalid := k.parse(r)
		if invalid != "" {
			sum.add(&sum.ErrorMessages.InvalidErrors, &restv2.BatchEntry{Index: indexIf(listed, i), Value: call.Echoed(&raw[i]), Message: invalid})
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
		return nil, call.Internal(ctx, err)
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
type summary struct{ *restv2.BatchSummary }

func newSummary() summary {
	return summary{&restv2.BatchSummary{ErrorMessages: &restv2.ErrorMessages{
		MissingErrors:     &restv2.ErrorList{},
		InvalidErrors:     &restv2.ErrorList{},
		DuplicationErrors: &restv2.ErrorList{},
		LimitErrors:       &restv2.ErrorList{},
	}}}
}

// list returns the summary's list for a kind of problem.
func (s summary) list(l problemList) **restv2.ErrorList {
	em := s.ErrorMessages
	return [...]**restv2.ErrorList{&em.MissingErrors, &em.InvalidErrors, &em.DuplicationErrors, &em.LimitErrors}[l]
}

func (s summary) add(list **restv2.ErrorList, e *restv2.BatchEntry) {
	(*list).Errors = append((*list).Errors, e)
	s.Errors++
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
