package main

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"
)

// spinForProfile burns CPU in a function of its own, for the profile of
// TestProfilePhases to find by name.
//
//go:noinline
func spinForProfile(d time.Duration) int {
	n := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := range 1000 {
			n += i * i
		}
	}
	return n
}

// spinProfile is the path of a CPU profile of 300 ms in spinForProfile.
func spinProfile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		t.Fatal(err)
	}
	spinForProfile(300 * time.Millisecond)
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestProfilePhases: a phase's share is read from pprof's table for the
// first function that contains its name, one that never ran counts 0%,
// and the totals come from pprof's header.
func TestProfilePhases(t *testing.T) {
	path := spinProfile(t)
	got, err := profilePhases(path, []phase{{"spinning", ".spinForProfile"}, {"idle", ".neverCalled"}})
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^Of the server's CPU samples \(Duration: [^,]+, Total samples = [^)]+\): spinning (\d+(\.\d+)?)%, idle 0%\.$`)
	m := want.FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("profilePhases = %q, want it to match %s", got, want)
	}
	// Nearly every sample is in the spin; a share of a few percent would
	// mean the wrong column or line was read.
	if share, _ := strconv.ParseFloat(m[1], 64); share < 50 {
		t.Errorf("spinning took %s%% of the samples, want most of them", m[1])
	}
}
