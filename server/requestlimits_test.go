package server

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/truckjobs/jobboard/internal/grpctest"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	jobboardv2 "github.com/truckjobs/jobboard/gen/jobboard/v2"
	"github.com/truckjobs/jobboard/internal/rules"
)

// jobsRequest is a post of 1,000 valid jobs whose descriptions make it
// exactly size bytes.
func jobsRequest(t *testing.T, size int) *jobboardv2.PostJobsRequest {
	t.Helper()
	req := &jobboardv2.PostJobsRequest{}
	for i := range rules.MaxJobsPerPost {
		req.Jobs = append(req.Jobs, naturalJob(fmt.Sprintf("J%d", i)))
	}
	grpctest.PadTo(t, req, size, func(n int) {
		per := n / len(req.Jobs)
		for i, j := range req.Jobs {
			d := strings.Repeat("d", per)
			if i == 0 {
				d += strings.Repeat("d", n-per*len(req.Jobs))
			}
			j.Description = "Good job " + d
		}
	})
	return req
}

// importRequest is an import of valid jobs whose descriptions make it
// exactly size bytes.
func importRequest(t *testing.T, size int) *jobboardv2.CreateJobImportRequest {
	t.Helper()
	req := &jobboardv2.CreateJobImportRequest{}
	const jobs = 2000 // descriptions of some 33,500 characters
	for i := range jobs {
		req.Jobs = append(req.Jobs, naturalJob(fmt.Sprintf("I%d", i)))
	}
	grpctest.PadTo(t, req, size, func(n int) {
		per := n / jobs
		for i, j := range req.Jobs {
			d := strings.Repeat("d", per)
			if i == 0 {
				d += strings.Repeat("d", n-per*jobs)
			}
			j.Description = "Good job " + d
		}
	})
	return req
}

// TestGRPCTakesWhatRESTTakes: over a real connection, each method accepts a
// request message of exactly its REST limit, and refuses one byte more with
// ResourceExhausted naming the limit (docs/api.md 7.2). Above the largest limit,
// grpc-go's receive limit, the words are grpc-go's, still naming both sizes.
func TestGRPCTakesWhatRESTTakes(t *testing.T) {
	f := newGRPCFixture(t, Config{})
	logs := captureLog(t)
	conn := f.conn(t, "127.0.0.1")
	ctx := withKey(f.a.APIKey)
	jobs := jobboardv2.NewJobServiceClient(conn)
	imports := jobboardv2.NewJobImportServiceClient(conn)
	drivers := jobboardv2.NewDriverServiceClient(conn)
	for _, tt := range []struct {
		name  string
		limit int
		call  func(size int) error
	}{
		{"PostJobs", rules.JobsPostLimit, func(size int) error {
			resp, err := jobs.PostJobs(ctx, jobsRequest(t, size))
			if err == nil && resp.GetAdded()+resp.GetUpdated()+resp.GetUnchanged() != rules.MaxJobsPerPost {
				t.Errorf("a post of %d bytes: %d added, %d updated, %d unchanged, want all %d jobs taken", size,
					resp.GetAdded(), resp.GetUpdated(), resp.GetUnchanged(), rules.MaxJobsPerPost)
			}
			return err
		}},
		{"CreateJobImport", rules.JobImportLimit, func(size int) error {
			_, err := imports.CreateJobImport(ctx, importRequest(t, size))
			return err
		}},
		{"GetJob", rules.DefaultLimit, func(size int) error {
			req := &jobboardv2.GetJobRequest{Id: 1}
			grpctest.PadTo(t, req, size, grpctest.WithPadding(req))
			_, err := jobs.GetJob(ctx, req)
			return err
		}},
		{"ListDrivers", rules.DefaultLimit, func(size int) error {
			req := &jobboardv2.ListDriversRequest{}
			grpctest.PadTo(t, req, size, func(n int) { req.Email = strings.Repeat("e", n) })
			_, err := drivers.ListDrivers(ctx, req)
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(tt.limit); status.Code(err) == codes.ResourceExhausted || status.Code(err) == codes.Internal {
				t.Fatalf("a message of %d bytes: %v", tt.limit, err)
			}
			t.Logf("%s: a message of %s bytes is accepted", tt.name, rules.GroupDigits(tt.limit))
			sizes := []int{tt.limit + 1}
			switch tt.limit {
			case rules.DefaultLimit:
				sizes = append(sizes, 3<<19)
			case rules.JobImportLimit:
				sizes = append(sizes, tt.limit+1<<20) // over grpc-go's own limit
			}
			for _, size := range sizes {
				err := tt.call(size)
				st := status.Convert(err)
				if size > rules.JobImportLimit {
					want := fmt.Sprintf("grpc: received message larger than max (%d vs. %d)", size, rules.JobImportLimit)
					if st.Code() != codes.ResourceExhausted || st.Message() != want {
						t.Errorf("a message of %d bytes: %v, want ResourceExhausted %q", size, err, want)
					}
					continue
				}
				want := fmt.Sprintf("%s takes at most %s (%s bytes); this message is %s bytes",
					tt.name, rules.MiB(tt.limit), rules.GroupDigits(tt.limit), rules.GroupDigits(size))
				if st.Code() != codes.ResourceExhausted || st.Message() != want || !hasQuotaFailure(st) {
					t.Errorf("a message of %d bytes: %v, want ResourceExhausted %q with a QuotaFailure", size, err, want)
				}
			}
			// A refused call has its access log line, as any other.
			line := regexp.MustCompile(`"method":"/[\w.]+/` + tt.name + `","code":"ResourceExhausted"`)
			if !line.MatchString(logs.String()) {
				t.Errorf("no access log line of %s with code ResourceExhausted in\n%s", tt.name, logs.String())
			}
		})
	}
}

// hasQuotaFailure reports whether st carries a QuotaFailure detail.
func hasQuotaFailure(st *status.Status) bool {
	return slices.ContainsFunc(st.Details(), func(d any) bool { _, ok := d.(*errdetails.QuotaFailure); return ok })
}
