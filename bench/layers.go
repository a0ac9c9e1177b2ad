package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/google/pprof/profile"
)

// layer is a part of an HTTP server's work that its CPU profile is split
// into. A sample goes to the layer of the first of its frames, from the
// function running outward, that the layer names; the layers are tried in
// this order at each frame. So the allocations of the encoder count as
// allocation, not encoding, and a system call the database client makes
// counts as a system call: the costs the floor shares are compared as
// such, and the layers only the service has keep what is theirs alone.
type layer struct {
	label string
	// prefixes start the names of the layer's functions; within names
	// more than one package's functions carry (an access log closure
	// inlined into main is named main.httpServers.AccessLog.func4).
	prefixes, within []string
}

// jobboard is the service's module path.
const jobboard = "github.com/truckjobs/jobboard/"

// serverLayers are the layers the service and its floor are compared by.
// The floor (bench/floor) has no access log, admission or gateway: all
// it has of the service's own layers is its handler, which counts as
// routing.
var serverLayers = []layer{
	{label: "system calls", prefixes: []string{"syscall.", "internal/runtime/syscall/"}},
	{label: "allocation and collection", prefixes: []string{"runtime.mallocgc", "runtime.newobject",
		"runtime.makeslice", "runtime.growslice", "runtime.makemap", "runtime.makechan", "runtime.gcBgMarkWorker",
		"runtime.gcAssistAlloc", "runtime.bgsweep", "runtime.bgscavenge", "runtime.gcStart",
		"runtime.deductAssistCredit"}},
	{label: "goroutine scheduling", prefixes: []string{"runtime.schedule", "runtime.findRunnable", "runtime.park_m",
		"runtime.mcall", "runtime.goexit0"}},
	{label: "database client", prefixes: []string{"database/sql.", "github.com/lib/pq."}},
	{label: "access log and metrics", prefixes: []string{jobboard + "internal/calllog.", jobboard + "internal/jsonlog.",
		jobboard + "internal/logbuf.", jobboard + "internal/metrics.", jobboard + "internal/tracing.", "log/slog.",
		"github.com/prometheus/"}, within: []string{".AccessLog."}},
	{label: "admission", prefixes: []string{jobboard + "server/admission.", jobboard + "gateway.(*place)",
		jobboard + "gateway.(*placeWriter)"}},
	{label: "encoding the answer", prefixes: []string{"encoding/json.", jobboard + "gateway/render.",
		jobboard + "gateway/wire.", jobboard + "gateway.marshaler", "google.golang.org/protobuf/"}},
	{label: "routing, checks and calls", prefixes: []string{jobboard, "github.com/grpc-ecosystem/grpc-gateway/",
		"main."}},
	{label: "net/http", prefixes: []string{"net/http.", "net/textproto.", "net/url.", "bufio.", "net.(*",
		"internal/poll."}},
}

// otherLayer takes the samples no layer names: the runtime's own work,
// timers and the like.
const otherLayer = "other"

// layerCPU is a profile's CPU time by layer, in the order of layers and
// then otherLayer.
type layerCPU struct {
	labels []string
	cpu    []float64 // seconds
	total  float64
	// duration is how long the profile sampled.
	duration float64
}

// profileLayers reads the CPU profile at path and sums its samples by layer.
func profileLayers(path string, layers []layer) (layerCPU, error) {
	f, err := os.Open(path)
	if err != nil {
		return layerCPU{}, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return layerCPU{}, fmt.Errorf("%s: %w", path, err)
	}
	cpuIndex := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			cpuIndex = i
		}
	}
	if cpuIndex < 0 {
		return layerCPU{}, fmt.Errorf("%s: not a CPU profile", path)
	}
	out := layerCPU{duration: float64(p.DurationNanos) / 1e9}
	for _, l := range layers {
		out.labels = append(out.labels, l.label)
	}
	out.labels = append(out.labels, otherLayer)
	out.cpu = make([]float64, len(out.labels))
	for _, s := range p.Sample {
		v := float64(s.Value[cpuIndex]) / 1e9
		out.cpu[layerOf(s, layers)] += v
		out.total += v
	}
	return out, nil
}

// layerOf is the index of the layer a sample goes to, len(layers) for none.
func layerOf(s *profile.Sample, layers []layer) int {
	// Locations run from the sampled frame outward; a location's lines
	// from the innermost function inlined there outward.
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			if line.Function == nil {
				continue
			}
			if i := matchLayer(line.Function.Name, layers); i >= 0 {
				return i
			}
		}
	}
	return len(layers)
}

// matchLayer is the first layer that names the function fn, or -1.
func matchLayer(fn string, layers []layer) int {
	for i, l := range layers {
		for _, p := range l.prefixes {
			if strings.HasPrefix(fn, p) {
				return i
			}
		}
		for _, w := range l.within {
			if strings.Contains(fn, w) {
				return i
			}
		}
	}
	return -1
}

// perRequest is each layer's CPU time a request, in µs, for a profile
// taken while the server answered rate requests a second.
func (c layerCPU) perRequest(rate float64) []float64 {
	out := make([]float64, len(c.cpu))
	if rate <= 0 || c.duration <= 0 {
		return out
	}
	for i, v := range c.cpu {
		out[i] = v / (rate * c.duration) * 1e6
	}
	return out
}

// layersNote compares the service's CPU a request with its floor's, layer
// by layer, from a profile of each taken at the given throughputs: where
// the service spends what the floor does not.
func layersNote(service, floor layerCPU, serviceRate, floorRate float64) string {
	s, f := service.perRequest(serviceRate), floor.perRequest(floorRate)
	var parts []string
	var sTotal, fTotal float64
	for i, label := range service.labels {
		sTotal, fTotal = sTotal+s[i], fTotal+f[i]
		parts = append(parts, fmt.Sprintf("%s %.1f / %.1f", label, s[i], f[i]))
	}
	return fmt.Sprintf("Server CPU a request by layer, service / floor, in µs (profiles of one more run of each, "+
		"at %.0f/s and %.0f/s; the layer of a sample is that of its innermost frame that names one): %s; "+
		"in all %.1f / %.1f.", serviceRate, floorRate, strings.Join(parts, ", "), sTotal, fTotal)
}
