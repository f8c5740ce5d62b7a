package main

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// sample is one benchmark result line: its name without the -GOMAXPROCS
// suffix, the package it ran in, and its metrics by unit.
type sample struct {
	pkg     string
	name    string
	metrics map[string]float64
}

// parse reads go test -bench output (benchfmt) and returns every result
// line, with the pkg: header that preceded it.
func parse(r io.Reader) ([]sample, error) {
	var out []sample
	var pkg string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		if !strings.HasPrefix(line, "Benchmark") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || len(f)%2 != 0 {
			continue // a benchmark that printed something else, or failed
		}
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			continue
		}
		s := sample{pkg: pkg, name: trimProcs(f[0]), metrics: map[string]float64{}}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			s.metrics[f[i+1]] = v
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// trimProcs drops the -N suffix that go test adds for GOMAXPROCS.
func trimProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return name
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil {
		return name
	}
	return name[:i]
}

// key returns the value of key=value in a benchmark name's path, or "".
func key(name, k string) string {
	for part := range strings.SplitSeq(name, "/") {
		if v, ok := strings.CutPrefix(part, k+"="); ok {
			return v
		}
	}
	return ""
}
