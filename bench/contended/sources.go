package main

import "slices"

// A committed measurement is several runs: run.sh's stability runs measure
// the headline table alone (runs/run-N.json), and one run measures the other
// tables and the shed path (runs/tables.json), so that several runs of the
// headline fit in the time of two full ones. The renderings read the
// headline from the last run that has it, every other table and the shed
// rows from the last run that has them, and the stability from every run
// with a headline table.

// hasHeadline says whether a run measured the headline table.
func hasHeadline(res *Result) bool { return len(rowsOf(res, headline)) > 0 }

// headlineRuns are the runs that measured the headline table, in order.
func headlineRuns(runs []*Result) []*Result {
	var out []*Result
	for _, r := range runs {
		if hasHeadline(r) {
			out = append(out, r)
		}
	}
	return out
}

// combined is one Result to render: the last headline run (or the last run
// when none has a headline), with every other table's rows, the shed rows
// and the caveats of the last run that has them. tablesRun is the run that
// supplied tables other than the headline when it is another run than the
// headline's, nil otherwise.
func combined(runs []*Result) (res *Result, tablesRun *Result) {
	base := runs[len(runs)-1]
	if hr := headlineRuns(runs); len(hr) > 0 {
		base = hr[len(hr)-1]
	}
	out := *base
	out.Rows = slices.Clone(base.Rows)
	out.Caveats = map[string]string{}
	for k, v := range base.Caveats {
		out.Caveats[k] = v
	}
	have := tables(base)
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		if r == base {
			continue
		}
		took := false
		for _, k := range tables(r) {
			if slices.Contains(have, k) {
				continue
			}
			have = append(have, k)
			out.Rows = append(out.Rows, rowsOf(r, k)...)
			took = true
		}
		if len(out.ShedRows) == 0 && len(r.ShedRows) > 0 {
			out.ShedRows = r.ShedRows
			took = true
		}
		if took {
			for k, v := range r.Caveats {
				if _, ok := out.Caveats[k]; !ok {
					out.Caveats[k] = v
				}
			}
			if tablesRun == nil {
				tablesRun = r
			}
		}
	}
	return &out, tablesRun
}
