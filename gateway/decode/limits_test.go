package decode

import "testing"

func TestTooManyItemsMessage(t *testing.T) {
	for _, tc := range []struct {
		limit itemLimit
		want  string
	}{
		{listItems, "the body lists more than 10000 items; a post processes the first 1,000 jobs, so send the rest in further requests"},
		{deleteItems, "the body lists more than 10000 items; a delete takes at most 10,000 ids or reference numbers, so send the rest in further requests"},
		{importJobs, "jobs: an import holds at most 50000 jobs"},
	} {
		if got := tc.limit.exceeded().Error(); got != tc.want {
			t.Errorf("limit of %d: %q, want %q", tc.limit.max, got, tc.want)
		}
	}
}

func TestGroupThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 50_000: "50,000", 1_234_567: "1,234,567", -1000: "-1,000", -100: "-100"} {
		if got := groupThousands(n); got != want {
			t.Errorf("groupThousands(%d) = %q, want %q", n, got, want)
		}
	}
}
