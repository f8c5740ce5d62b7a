package main

import (
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strings"
)

// The chart: core-ns per push against producer count, both on log scales, one
// polyline with markers per implementation, written as plain SVG so that it
// needs no dependency and renders on GitHub.

const (
	svgWidth   = 980
	svgHeight  = 600
	plotLeft   = 84
	plotTop    = 78
	plotRight  = svgWidth - 230 // the legend sits right of the plot
	plotBottom = svgHeight - 72
)

// lineStyle is how one implementation's line is drawn.
type lineStyle struct {
	color string
	dash  string // stroke-dasharray; empty for solid
	width float64
}

// styles gives every known implementation a fixed look: sink rows solid,
// single-queue baselines dashed, peers dotted, sharded-push (the headline)
// and sharded-vyukov (the original's configuration) heaviest.
var styles = map[string]lineStyle{
	"sharded-push":     {"#000000", "", 4},
	"sharded-vyukov":   {"#d62728", "", 3.5},
	"sharded-mutex":    {"#ff7f0e", "", 2},
	"sharded-chanring": {"#bcbd22", "", 2},
	"sharded-zenq":     {"#8c564b", "", 2},
	"sharded-notify":   {"#d62728", "4 2", 2.5},
	"sharded-default":  {"#e7969c", "", 2},
	"unsharded-vyukov": {"#9467bd", "", 2},
	"single-vyukov":    {"#1f77b4", "7 4", 2},
	"single-mutex":     {"#17becf", "7 4", 2},
	"single-chan":      {"#2ca02c", "7 4", 2},
	"xsync":            {"#e377c2", "2 3", 2},
	"workiva":          {"#7f7f7f", "2 3", 2},
	"diodes":           {"#393b79", "2 3", 2},
	"lscq":             {"#111111", "2 3", 2},
}

// series is one implementation's points, in producer order.
type series struct {
	impl   string
	points []Row
}

func seriesOf(rows []Row) []series {
	var out []series
	index := map[string]int{}
	for _, r := range rows {
		i, ok := index[r.Impl]
		if !ok {
			i = len(out)
			index[r.Impl] = i
			out = append(out, series{impl: r.Impl})
		}
		out[i].points = append(out[i].points, r)
	}
	for i := range out {
		slices.SortFunc(out[i].points, func(a, b Row) int { return a.Producers - b.Producers })
	}
	return out
}

// chartTable is the table the chart draws: the headline (held, 8 bytes)
// when the run has it, else its first table.
func chartTable(res *Result) (tableKey, []Row) {
	ks := tables(res)
	if len(ks) == 0 {
		return tableKey{}, nil
	}
	k := ks[0]
	if slices.Contains(ks, headline) {
		k = headline
	}
	return k, rowsOf(res, k)
}

// writeSVG draws one accept-path table (chartTable).
func writeSVG(w io.Writer, res *Result) error {
	key, rows := chartTable(res)
	ser := seriesOf(rows)
	if len(ser) == 0 {
		return fmt.Errorf("svg: no rows to draw")
	}
	var prods []int
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		if !slices.Contains(prods, r.Producers) {
			prods = append(prods, r.Producers)
		}
		if r.CoreNsPerOp > 0 {
			ymin = min(ymin, r.CoreNsPerOp)
			ymax = max(ymax, r.CoreNsPerOp)
		}
	}
	slices.Sort(prods)
	if math.IsInf(ymin, 1) {
		ymin, ymax = 1, 10
	}

	// x: log2 of the producer count, half a step of padding each side.
	x0, x1 := math.Log2(float64(prods[0])), math.Log2(float64(prods[len(prods)-1]))
	if x1-x0 < 1 {
		x0, x1 = x0-1, x1+1
	}
	pad := (x1 - x0) * 0.04
	x0, x1 = x0-pad, x1+pad
	xOf := func(p int) float64 {
		return plotLeft + (math.Log2(float64(p))-x0)/(x1-x0)*(plotRight-plotLeft)
	}
	// y: log10, whole decades.
	y0 := math.Floor(math.Log10(ymin))
	y1 := math.Ceil(math.Log10(ymax))
	if y1 <= y0 {
		y1 = y0 + 1
	}
	yOf := func(v float64) float64 {
		return plotBottom - (math.Log10(v)-y0)/(y1-y0)*(plotBottom-plotTop)
	}

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="13">`+"\n",
		svgWidth, svgHeight, svgWidth, svgHeight)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", svgWidth, svgHeight)
	fmt.Fprintf(&b, `<text x="%d" y="28" font-size="18" font-weight="bold">Contended accept path: core-ns per push</text>`+"\n", plotLeft)
	fmt.Fprintf(&b, `<text x="%d" y="50" font-size="12" fill="#444">%s</text>`+"\n", plotLeft,
		esc(fmt.Sprintf("%s; %s; %s, %d shards, median of %d trials", res.Run.Machine, key, windowText(res.Config), res.Config.Shards, res.Config.Trials)))

	// Grid and y ticks: 1, 2, 5 per decade.
	for d := y0; d <= y1; d++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, d)
			if math.Log10(v) > y1+1e-9 {
				break
			}
			y := yOf(v)
			grid := "#e6e6e6"
			if m == 1 {
				grid = "#c8c8c8"
			}
			fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="1"/>`+"\n", plotLeft, y, plotRight, y, grid)
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle" fill="#333">%s</text>`+"\n", plotLeft-8, y, tickLabel(v))
		}
	}
	// x ticks at every measured producer count.
	for _, p := range prods {
		x := xOf(p)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e6e6e6" stroke-width="1"/>`+"\n", x, plotTop, x, plotBottom)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#333" stroke-width="1"/>`+"\n", x, plotBottom, x, plotBottom+5)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#333">%d</text>`+"\n", x, plotBottom+20, p)
	}
	// Axes and labels.
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333" stroke-width="1"/>`+"\n",
		plotLeft, plotTop, plotRight-plotLeft, plotBottom-plotTop)
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">producers (one locked OS thread each; log scale)</text>`+"\n",
		(plotLeft+plotRight)/2, plotBottom+48)
	fmt.Fprintf(&b, `<text transform="translate(24 %d) rotate(-90)" text-anchor="middle">core-ns per push (log scale; lower is better)</text>`+"\n",
		(plotTop+plotBottom)/2)

	// One line per implementation.
	for i, s := range ser {
		st := styleOf(s.impl, i)
		var pts []string
		for _, r := range s.points {
			if r.CoreNsPerOp > 0 {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", xOf(r.Producers), yOf(r.CoreNsPerOp)))
			}
		}
		fmt.Fprintf(&b, `<g class="impl" data-impl="%s">`+"\n", esc(s.impl))
		dash := ""
		if st.dash != "" {
			dash = fmt.Sprintf(` stroke-dasharray="%s"`, st.dash)
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="%.1f"%s stroke-linejoin="round"/>`+"\n",
			strings.Join(pts, " "), st.color, st.width, dash)
		for _, r := range s.points {
			if r.CoreNsPerOp <= 0 {
				continue
			}
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="%.1f" fill="%s" stroke="%s" stroke-width="1.5"><title>%s, %d producers: %s core-ns per push</title></circle>`+"\n",
				xOf(r.Producers), yOf(r.CoreNsPerOp), 2+st.width/2, st.color, st.color, esc(s.impl), r.Producers, sig3(r.CoreNsPerOp))
		}
		b.WriteString("</g>\n")
	}

	// Legend.
	lx, ly := plotRight+24, plotTop+6
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">implementation</text>`+"\n", lx, ly)
	for i, s := range ser {
		st := styleOf(s.impl, i)
		y := ly + 24 + i*24
		dash := ""
		if st.dash != "" {
			dash = fmt.Sprintf(` stroke-dasharray="%s"`, st.dash)
		}
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="%.1f"%s/>`+"\n", lx, y, lx+34, y, st.color, st.width, dash)
		fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="%.1f" fill="%s"/>`+"\n", lx+17, y, 2+st.width/2, st.color)
		fmt.Fprintf(&b, `<text x="%d" y="%d" dominant-baseline="middle">%s</text>`+"\n", lx+44, y, esc(s.impl))
	}
	ny := ly + 24 + len(ser)*24 + 8
	for i, line := range []string{"solid: sink rows", "red dashed: sink rows notifying", "dashed: one shared queue", "dotted: peer libraries"} {
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" fill="#555">%s</text>`+"\n", lx, ny+i*16, line)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// styleOf returns an implementation's line style, with a fallback colour
// for names the table does not know.
func styleOf(impl string, i int) lineStyle {
	if st, ok := styles[impl]; ok {
		return st
	}
	fallback := []string{"#000000", "#8c6d31", "#637939", "#843c39"}
	return lineStyle{color: fallback[i%len(fallback)], width: 2}
}

// tickLabel writes a tick value: 1, 20, 500, 1k, 20k.
func tickLabel(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%gk", v/1e3)
	default:
		return fmt.Sprintf("%g", v)
	}
}

func esc(s string) string { return html.EscapeString(s) }
