package svgplot

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files from the current output")

// TestGolden compares whole drawings with files checked in after being
// looked at: any change to the output shows as a diff to review.
func TestGolden(t *testing.T) {
	tests := []struct {
		file string
		plot Plot
	}{
		{"two-series.svg", Plot{
			Title: "p99 by size <drivers>", XLabel: "applications", YLabel: "ms",
			Series: []Series{
				{Name: "email", X: []float64{1e4, 1e5, 1e6}, Y: []float64{1.2, 1.5, 2.1}},
				{Name: "state & count", X: []float64{1e4, 1e5, 1e6}, Y: []float64{2.5, 9, 71}},
				{Name: "target 25 ms", X: []float64{1e4, 1e6}, Y: []float64{25, 25}, Dashed: true},
			},
		}},
		// One x value only: the axis still spans a decade around it.
		{"one-point.svg", Plot{
			Title: "one point", XLabel: "accounts", YLabel: "ms",
			Series: []Series{{Name: "list", X: []float64{10}, Y: []float64{0.4}}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			var got bytes.Buffer
			if err := tt.plot.Write(&got); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tt.file)
			if *update {
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s differs from the drawing (go test ./bench/svgplot -update rewrites it); got:\n%s", path, got.String())
			}
		})
	}
}

func TestRefusesWhatItCannotDraw(t *testing.T) {
	tests := []struct {
		name, want string
		plot       Plot
	}{
		{"no point", "no point", Plot{Title: "empty"}},
		{"lengths differ", "2 x and 1 y", Plot{Series: []Series{{Name: "s", X: []float64{1, 2}, Y: []float64{1}}}}},
		{"zero x", "log scale", Plot{Series: []Series{{Name: "s", X: []float64{0}, Y: []float64{1}}}}},
		{"NaN y", "y = NaN", Plot{Series: []Series{{Name: "s", X: []float64{1}, Y: []float64{nan()}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.plot.Write(&bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

func TestNiceCeiling(t *testing.T) {
	tests := []struct{ max, ceiling, step float64 }{
		{71, 80, 20},
		{9.3, 10, 2},
		{0.4, 0.4, 0.1},
		{25, 25, 5},
		{0, 1, 0.2},
	}
	for _, tt := range tests {
		c, s := niceCeiling(tt.max)
		if !close(c, tt.ceiling) || !close(s, tt.step) {
			t.Errorf("niceCeiling(%v) = %v, %v; want %v, %v", tt.max, c, s, tt.ceiling, tt.step)
		}
	}
}

func TestTickLabel(t *testing.T) {
	for v, want := range map[float64]string{1e6: "1M", 2500: "2.5k", 10: "10", 0.5: "0.5", 1e4: "10k"} {
		if got := tickLabel(v); got != want {
			t.Errorf("tickLabel(%v) = %q, want %q", v, got, want)
		}
	}
}

func close(a, b float64) bool { d := a - b; return d < 1e-9 && d > -1e-9 }

func nan() float64 { var z float64; return z / z }
