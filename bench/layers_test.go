package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// TestMatchLayer: functions of the profiles of the retrieve scenario, each
// with the layer it belongs to; the first layer that names a function
// takes it.
func TestMatchLayer(t *testing.T) {
	for _, c := range []struct{ fn, want string }{
		{"internal/runtime/syscall/linux.Syscall6", "system calls"},
		{"syscall.write", "system calls"},
		{"runtime.mallocgc", "allocation and collection"},
		{"runtime.gcBgMarkWorker.func2", "allocation and collection"},
		{"runtime.findRunnable", "goroutine scheduling"},
		{"database/sql.(*Rows).Next", "database client"},
		{"github.com/lib/pq.(*conn).recv1", "database client"},
		{jobboard + "internal/calllog.(*Call).End", "access log and metrics"},
		{"main.httpServers.AccessLog.func4", "access log and metrics"},
		{jobboard + "server/admission.(*Limiter).wait", "admission"},
		{jobboard + "gateway.(*place).take", "admission"},
		{jobboard + "gateway.(*placeWriter).Write", "admission"},
		{jobboard + "gateway/render.Job", "encoding the answer"},
		{"encoding/json.(*Encoder).Encode", "encoding the answer"},
		{jobboard + "gateway.(*gateway).asRouted", "routing, checks and calls"},
		{jobboard + "server/store.(*Store).Job", "routing, checks and calls"},
		{"github.com/grpc-ecosystem/grpc-gateway/v2/runtime.(*ServeMux).ServeHTTP", "routing, checks and calls"},
		{"main.readJob", "routing, checks and calls"},
		{"net/http.(*conn).serve", "net/http"},
		{"net.(*conn).Write", "net/http"},
		{"bufio.(*Writer).Flush", "net/http"},
		{"runtime.memmove", otherLayer},
		{"runtime.main", otherLayer},
		{"github.com/other/domain.Parse", otherLayer}, // "main." inside a name is not package main
	} {
		got := otherLayer
		if i := matchLayer(c.fn, serverLayers); i >= 0 {
			got = serverLayers[i].label
		}
		if got != c.want {
			t.Errorf("matchLayer(%q) = %q, want %q", c.fn, got, c.want)
		}
	}
}

// TestLayerOf: a sample goes to the layer of its innermost frame that a
// layer names, counting the functions inlined into a frame innermost
// first; a sample no frame of which is named goes to otherLayer.
func TestLayerOf(t *testing.T) {
	loc := func(names ...string) *profile.Location {
		l := &profile.Location{}
		for _, n := range names {
			l.Line = append(l.Line, profile.Line{Function: &profile.Function{Name: n}})
		}
		return l
	}
	label := func(i int) string {
		if i == len(serverLayers) {
			return otherLayer
		}
		return serverLayers[i].label
	}
	for _, c := range []struct {
		name  string
		stack []*profile.Location // innermost first
		want  string
	}{
		{"a system call made by the database client",
			[]*profile.Location{loc("internal/runtime/syscall/linux.Syscall6"), loc("github.com/lib/pq.(*conn).send"),
				loc(jobboard + "server/store.(*Store).Job")}, "system calls"},
		{"the encoder's allocation",
			[]*profile.Location{loc("runtime.nextFreeFast"), loc("runtime.mallocgc"), loc(jobboard + "gateway/render.Job")},
			"allocation and collection"},
		{"an unnamed frame takes its caller's layer",
			[]*profile.Location{loc("runtime.memmove"), loc(jobboard + "gateway/wire.(*jsonWriter).String"),
				loc(jobboard + "gateway.(*gateway).getJob.func1")}, "encoding the answer"},
		{"inlined functions, innermost first",
			[]*profile.Location{loc(jobboard+"server/admission.(*Limiter).releaser.func1", jobboard+"gateway.(*gateway).prepare.func1")},
			"admission"},
		{"nothing named", []*profile.Location{loc("runtime.memmove"), loc("runtime.goexit")}, otherLayer},
	} {
		if got := label(layerOf(&profile.Sample{Location: c.stack}, serverLayers)); got != c.want {
			t.Errorf("%s: layer %q, want %q", c.name, got, c.want)
		}
	}
}

// TestProfileLayers reads a real CPU profile: the samples of a spin go to
// its layer, the layers add up to the total, and the duration is the
// profile's.
func TestProfileLayers(t *testing.T) {
	path := spinProfile(t)
	got, err := profileLayers(path, []layer{{label: "spinning", within: []string{".spinForProfile"}},
		{label: "idle", within: []string{".neverCalled"}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"spinning", "idle", otherLayer}; strings.Join(got.labels, ",") != strings.Join(want, ",") {
		t.Fatalf("labels %q, want %q", got.labels, want)
	}
	if got.cpu[0] < 0.5*got.total || got.cpu[1] != 0 {
		t.Errorf("spinning %.3f s, idle %.3f s of %.3f s, want most in spinning and none idle", got.cpu[0], got.cpu[1], got.total)
	}
	if sum := got.cpu[0] + got.cpu[1] + got.cpu[2]; sum < got.total*0.999 || sum > got.total*1.001 {
		t.Errorf("the layers add up to %.3f s, the total is %.3f s", sum, got.total)
	}
	if got.duration < 0.25 || got.duration > 5 {
		t.Errorf("duration %.3f s, want about the 0.3 s profiled", got.duration)
	}
	if _, err := profileLayers(filepath.Join(t.TempDir(), "none.pprof"), serverLayers); err == nil {
		t.Error("a missing profile read without an error")
	}
}

// TestLayersNote: each layer's CPU a request is its seconds over the
// requests the profile's duration held at the run's throughput.
func TestLayersNote(t *testing.T) {
	service := layerCPU{labels: []string{"system calls", otherLayer}, cpu: []float64{2, 0.5}, total: 2.5, duration: 10}
	floor := layerCPU{labels: []string{"system calls", otherLayer}, cpu: []float64{3, 0.25}, total: 3.25, duration: 10}
	got := layersNote(service, floor, 10000, 20000)
	// 2 s over 10 s at 10,000/s is 20 µs a request; 3 s at 20,000/s, 15 µs.
	for _, want := range []string{"at 10000/s and 20000/s", "system calls 20.0 / 15.0", "other 5.0 / 1.2", "in all 25.0 / 16.2."} {
		if !strings.Contains(got, want) {
			t.Errorf("layersNote = %q, want it to contain %q", got, want)
		}
	}
	if got := (layerCPU{cpu: []float64{1}, duration: 10}).perRequest(0); got[0] != 0 {
		t.Errorf("perRequest at no throughput = %v, want 0", got)
	}
}
