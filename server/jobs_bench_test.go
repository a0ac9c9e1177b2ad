package server

import (
	"fmt"
	"testing"

	restv2 "github.com/truckjobs/jobboard/gen/jobboard/rest/v2"
	"github.com/truckjobs/jobboard/internal/rules"
)

// BenchmarkPostJobs posts 1,000 jobs: all new, all changed, all unchanged.
func BenchmarkPostJobs(b *testing.B) {
	batch := func(prefix, title string) *restv2.PostJobsRequest {
		req := &restv2.PostJobsRequest{}
		for i := 0; i < rules.MaxJobsPerPost; i++ {
			j := input(fmt.Sprintf("%sJ%d", prefix, i))
			j.Title = &title
			j.Description = new("<p>Home <b>weekly</b>, late-model trucks, paid orientation.</p>")
			j.EmploymentType = []string{"Full-Time"}
			req.Jobs = append(req.Jobs, j)
		}
		return req
	}
	// run times one post per round; prepare, untimed, sets the round up and
	// returns the request to time.
	run := func(b *testing.B, prepare func(post func(*restv2.PostJobsRequest), n int) *restv2.PostJobsRequest) {
		svc, ctx, st, _ := newJobsFixture(b)
		post := func(req *restv2.PostJobsRequest) {
			resp, err := svc.PostJobs(ctx, req)
			if err != nil || resp.Errors > 0 {
				b.Fatal(err, resp)
			}
		}
		for n := 0; b.Loop(); n++ {
			b.StopTimer()
			// Start each round from no active jobs so the account stays under its limit.
			if _, err := st.DB().Exec(`UPDATE jobs SET deleted_at = now() WHERE reference_number LIKE 'N%'`); err != nil {
				b.Fatal(err)
			}
			req := prepare(post, n)
			b.StartTimer()
			post(req)
		}
	}
	b.Run("new", func(b *testing.B) {
		run(b, func(_ func(*restv2.PostJobsRequest), n int) *restv2.PostJobsRequest {
			return batch(fmt.Sprintf("N%d", n), "Driver")
		})
	})
	b.Run("changed", func(b *testing.B) {
		run(b, func(post func(*restv2.PostJobsRequest), n int) *restv2.PostJobsRequest {
			post(batch("C", fmt.Sprintf("Driver %d", n)))
			return batch("C", fmt.Sprintf("Driver %d+", n))
		})
	})
	b.Run("unchanged", func(b *testing.B) {
		run(b, func(post func(*restv2.PostJobsRequest), _ int) *restv2.PostJobsRequest {
			post(batch("U", "Driver"))
			return batch("U", "Driver")
		})
	})
}
