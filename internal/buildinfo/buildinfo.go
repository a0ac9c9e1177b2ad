// Package buildinfo says which build of the service is running: the
// commit it was built from. make build and make image set it by the
// linker (-X), from git, so it holds whatever GOFLAGS say (-buildvcs=false
// leaves the toolchain's own record out); a plain go build in a checkout
// falls back on the toolchain's record.
package buildinfo

import (
	"runtime/debug"
	"time"
)

// Info is what the binary knows of its build.
type Info struct {
	// Revision is the commit's hash, "unknown" when the build recorded
	// none (go run, go test, a build outside a checkout).
	Revision string `json:"revision"`
	// CommitTime is the commit's time, zero when unknown.
	CommitTime time.Time `json:"commit_time,omitzero"`
	// Modified: the checkout had changes not committed.
	Modified bool `json:"modified"`
	// GoVersion is the toolchain's version.
	GoVersion string `json:"go_version"`
}

// Set by the linker: make build and make image pass
// -X github.com/truckjobs/jobboard/internal/buildinfo.revision=HASH,
// commitTime (RFC 3339) and modified=true when the checkout had changes.
var revision, commitTime, modified string

// Read returns the running binary's build information.
func Read() Info {
	info := Info{Revision: "unknown"}
	bi, ok := debug.ReadBuildInfo()
	if ok {
		info.GoVersion = bi.GoVersion
		info.fromToolchain(bi.Settings)
	}
	if revision != "" {
		info.Revision, info.Modified = revision, modified == "true"
		info.CommitTime, _ = time.Parse(time.RFC3339, commitTime)
	}
	return info
}

// fromToolchain reads what go build records of a Git checkout.
func (info *Info) fromToolchain(settings []debug.BuildSetting) {
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.time":
			info.CommitTime, _ = time.Parse(time.RFC3339, s.Value)
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
}

// Short is the revision cut to 12 characters, with "+modified" when the
// checkout had changes: what a log line or a metric label shows.
func (i Info) Short() string {
	r := i.Revision
	if len(r) > 12 {
		r = r[:12]
	}
	if i.Modified {
		r += "+modified"
	}
	return r
}
