package jobs

import (
	"testing"
)

// TestWholeListPosition: a position reads back as written, and what no
// position wrote is refused.
func TestWholeListPosition(t *testing.T) {
	for _, p := range []wholeListPosition{
		{after: 812, jobs: 1},
		{after: 812, jobs: 3762},
		{after: 1 << 40, jobs: wholeListPage},
	} {
		if got, ok := decodeWholeListPosition(p.encode()); !ok || got != p {
			t.Errorf("%+v read back as %+v (%v)", p, got, ok)
		}
	}
	for _, tt := range []struct {
		name string
		raw  []byte
	}{
		{"empty", nil},
		{"no jobs", []byte{5}},
		{"no jobs to take", []byte{5, 0}},
		{"more jobs than a page takes", wholeListPosition{after: 5, jobs: wholeListPage + 1}.encode()},
		{"an id past the ids", wholeListPosition{after: 1<<62 + 1, jobs: 5}.encode()},
		{"a varint cut short", []byte{5, 0x80}},
		{"a value too many", []byte{5, 7, 1}},
	} {
		if p, ok := decodeWholeListPosition(tt.raw); ok {
			t.Errorf("%s: read as %+v", tt.name, p)
		}
	}
}

// TestJobsToFill: the next page takes as many jobs as fill its budget at
// the size of the page before's, within a page's bounds.
func TestJobsToFill(t *testing.T) {
	for _, tt := range []struct {
		name  string
		read  int
		bytes int64
		want  int
	}{
		{"jobs of 700 bytes", 1000, 700_000, 2995},
		{"jobs of the fixed share only", 1000, 256_000, 8192},
		{"small jobs fill the most a page takes", 1000, 100_000, wholeListPage},
		{"one job larger than a page", 1, 5 << 20, 1},
		{"nothing read", 0, 0, wholeListPage},
	} {
		if got := jobsToFill(tt.read, tt.bytes); got != tt.want {
			t.Errorf("%s: %d jobs, want %d", tt.name, got, tt.want)
		}
	}
}
