package buildinfo

import (
	"testing"
	"time"
)

// TestRead: what the linker set wins over the toolchain's record, and
// Short cuts the revision and marks a modified checkout.
func TestRead(t *testing.T) {
	defer func(r, c, m string) { revision, commitTime, modified = r, c, m }(revision, commitTime, modified)
	for _, tt := range []struct {
		name                string
		rev, time, modified string
		wantShort           string
		wantTime            time.Time
	}{
		{"set by the linker", "0123456789abcdef0123456789abcdef01234567", "2026-12-05T09:04:49+00:00", "",
			"0123456789ab", time.Date(2026, 12, 5, 9, 4, 49, 0, time.UTC)},
		{"from a checkout with changes", "0123456789abcdef0123456789abcdef01234567", "2026-12-05T09:04:49Z", "true",
			"0123456789ab+modified", time.Date(2026, 12, 5, 9, 4, 49, 0, time.UTC)},
		{"short revision kept whole", "abc", "", "", "abc", time.Time{}},
	} {
		revision, commitTime, modified = tt.rev, tt.time, tt.modified
		info := Read()
		if got := info.Short(); got != tt.wantShort {
			t.Errorf("%s: Short %q, want %q", tt.name, got, tt.wantShort)
		}
		if !info.CommitTime.Equal(tt.wantTime) {
			t.Errorf("%s: commit time %v, want %v", tt.name, info.CommitTime, tt.wantTime)
		}
		if info.GoVersion == "" {
			t.Errorf("%s: no Go version", tt.name)
		}
	}
	revision, commitTime, modified = "", "", ""
	if info := Read(); info.Revision == "" {
		t.Error("no revision: want the toolchain's or unknown")
	}
}
