// Package svgplot draws line charts as SVG for the benchmark reports: a
// logarithmic x axis (data sizes grow tenfold a step), a linear y axis from
// zero, one line per series and a legend. It needs nothing but the standard
// library, so a report's plots are reproducible on any machine, and its
// output is deterministic, so plots can be compared byte for byte.
package svgplot

import (
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
)

// Series is one line: points (X[i], Y[i]), drawn in the order given.
type Series struct {
	Name string
	X, Y []float64
	// Dashed draws a reference line (a target, say) apart from measures.
	Dashed bool
}

// Plot is one chart.
type Plot struct {
	Title          string
	XLabel, YLabel string
	Series         []Series
}

// The canvas: the plot area sits inside margins that hold the ticks and
// labels, and the legend takes a column on the right.
const (
	width, height            = 900, 480
	left, right, top, bottom = 70, 250, 40, 60
	plotW, plotH             = width - left - right, height - top - bottom
)

// palette holds colours told apart in print and by most colour-blind
// readers; series past its end reuse it with a dash pattern.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"}

// Write renders the plot. It refuses a plot it cannot draw honestly: no
// point, a series whose X and Y differ in length, or an x value that a log
// scale cannot place.
func (p Plot) Write(w io.Writer) error {
	xmin, xmax, ymax, err := p.bounds()
	if err != nil {
		return err
	}
	xs := logScale{lo: math.Log10(xmin), hi: math.Log10(xmax)}
	if xs.hi == xs.lo {
		xs.lo, xs.hi = xs.lo-1, xs.hi+1
	}
	ytop, ystep := niceCeiling(ymax)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="15" text-anchor="middle">%s</text>`+"\n", left+plotW/2, esc(p.Title))
	p.writeYAxis(&b, ytop, ystep)
	p.writeXAxis(&b, xs)
	for i, s := range p.Series {
		writeLine(&b, s, i, xs, ytop)
	}
	p.writeLegend(&b)
	b.WriteString("</svg>\n")
	_, err = io.WriteString(w, b.String())
	return err
}

func (p Plot) bounds() (xmin, xmax, ymax float64, err error) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, s := range p.Series {
		if len(s.X) != len(s.Y) {
			return 0, 0, 0, fmt.Errorf("svgplot: series %q has %d x and %d y values", s.Name, len(s.X), len(s.Y))
		}
		for i, x := range s.X {
			if !(x > 0) || math.IsInf(x, 0) {
				return 0, 0, 0, fmt.Errorf("svgplot: series %q: x = %v has no place on a log scale", s.Name, x)
			}
			if y := s.Y[i]; math.IsNaN(y) || math.IsInf(y, 0) {
				return 0, 0, 0, fmt.Errorf("svgplot: series %q: y = %v", s.Name, y)
			}
			xmin, xmax, ymax = math.Min(xmin, x), math.Max(xmax, x), math.Max(ymax, s.Y[i])
		}
	}
	if math.IsInf(xmin, 1) {
		return 0, 0, 0, fmt.Errorf("svgplot: %q has no point", p.Title)
	}
	return xmin, xmax, ymax, nil
}

// logScale maps log10(x) in [lo, hi] onto the plot's width.
type logScale struct{ lo, hi float64 }

func (s logScale) px(x float64) float64 {
	return left + (math.Log10(x)-s.lo)/(s.hi-s.lo)*plotW
}

func py(y, ytop float64) float64 { return top + plotH - y/ytop*plotH }

// niceCeiling rounds max up to a multiple of a 1-2-5 step chosen for about
// five ticks, so the axis reads in round numbers.
func niceCeiling(max float64) (ceiling, step float64) {
	if max <= 0 {
		return 1, 0.2
	}
	raw := max / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if step = m * mag; step >= raw {
			break
		}
	}
	return math.Ceil(max/step) * step, step
}

func (p Plot) writeYAxis(b *strings.Builder, ytop, step float64) {
	for i := 0; float64(i)*step <= ytop*(1+1e-9); i++ {
		v := float64(i) * step
		y := py(v, ytop)
		fmt.Fprintf(b, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#e0e0e0"/>`+"\n", left, num(y), left+plotW, num(y))
		fmt.Fprintf(b, `<text x="%d" y="%s" text-anchor="end">%s</text>`+"\n", left-6, num(y+4), tickLabel(v))
	}
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, top, left, top+plotH)
	fmt.Fprintf(b, `<text transform="translate(18 %d) rotate(-90)" text-anchor="middle">%s</text>`+"\n", top+plotH/2, esc(p.YLabel))
}

// writeXAxis puts a tick at every power of ten in range, with faint lines
// at 2x and 5x between them.
func (p Plot) writeXAxis(b *strings.Builder, s logScale) {
	base := top + plotH
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, base, left+plotW, base)
	for e := math.Floor(s.lo); e <= math.Ceil(s.hi); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if l := math.Log10(v); l < s.lo-1e-9 || l > s.hi+1e-9 {
				continue
			}
			x := num(s.px(v))
			if m != 1 {
				fmt.Fprintf(b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#f0f0f0"/>`+"\n", x, top, x, base)
				continue
			}
			fmt.Fprintf(b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#e0e0e0"/>`+"\n", x, top, x, base)
			fmt.Fprintf(b, `<text x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", x, base+18, tickLabel(v))
		}
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle">%s (log scale)</text>`+"\n", left+plotW/2, height-16, esc(p.XLabel))
}

func writeLine(b *strings.Builder, s Series, i int, xs logScale, ytop float64) {
	color, dash := style(s, i)
	var pts []string
	for k := range s.X {
		pts = append(pts, num(xs.px(s.X[k]))+","+num(py(s.Y[k], ytop)))
	}
	fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`+"\n", color, dash, strings.Join(pts, " "))
	if s.Dashed {
		return
	}
	for _, pt := range pts {
		x, y, _ := strings.Cut(pt, ",")
		fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`+"\n", x, y, color)
	}
}

// style gives series i its colour and dash pattern: reference lines are
// grey dashes, and measures past the palette's end repeat it dotted.
func style(s Series, i int) (color, dash string) {
	if s.Dashed {
		return "#555555", ` stroke-dasharray="8 4"`
	}
	if i >= len(palette) {
		dash = ` stroke-dasharray="2 3"`
	}
	return palette[i%len(palette)], dash
}

func (p Plot) writeLegend(b *strings.Builder) {
	x := left + plotW + 20
	for i, s := range p.Series {
		color, dash := style(s, i)
		y := top + 10 + 20*i
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>`+"\n", x, y, x+24, y, color, dash)
		fmt.Fprintf(b, `<text x="%d" y="%d">%s</text>`+"\n", x+30, y+4, esc(s.Name))
	}
}

// tickLabel writes 1000000 as 1M and 2500 as 2.5k: short enough for a tick.
func tickLabel(v float64) string {
	for _, u := range []struct {
		div    float64
		suffix string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if math.Abs(v) >= u.div {
			return strconv.FormatFloat(v/u.div, 'g', 4, 64) + u.suffix
		}
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// num prints a coordinate with one decimal, enough on a 900-pixel canvas.
func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func esc(s string) string { return html.EscapeString(s) }
