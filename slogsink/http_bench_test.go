package slogsink_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkHTTP reproduces a server that logs: a net/http server on
// loopback whose handler makes a logger of its own for each request (With
// the request's id and route) and logs 8 or 32 records of four attributes
// into a file, serving 64 keep-alive connections from client goroutines in
// the same process, closed loop, b.N requests in all. It compares slog's
// synchronous JSON handler with slogsink at its defaults and reports
// requests per second, the p99 of the request as the client sees it, and
// the share of records lost.
//
//	go test -run '^$' -bench HTTP -benchtime 20000x -count 3 ./slogsink/
func BenchmarkHTTP(b *testing.B) {
	for _, perReq := range []int{8, 32} {
		for _, kind := range []string{"sync", "slogsink"} {
			b.Run(fmt.Sprintf("records=%d/handler=%s", perReq, kind), func(b *testing.B) {
				benchmarkHTTP(b, kind, perReq)
			})
		}
	}
}

func benchmarkHTTP(b *testing.B, kind string, perReq int) {
	const conns = 64
	w := benchWriter(b, "file")
	bh := newBenchHandler(b, kind, 0, w)
	base := slog.New(bh.h).With("service", "checkout")
	var ids atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		id := ids.Add(1)
		lg := base.With("request", id, "route", r.URL.Path)
		for k := range perReq {
			lg.Info("step", "step", k, "status", 200, "bytes", 1234, "user", "ann")
		}
		rw.Header().Set("Content-Length", "2")
		_, _ = io.WriteString(rw, "ok")
	}))
	tr := &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
	client := &http.Client{Transport: tr}
	defer func() {
		tr.CloseIdleConnections()
		srv.Close()
	}()

	var left atomic.Int64
	left.Store(int64(b.N))
	lat := make([][]time.Duration, conns)
	var failed atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for c := range conns {
		wg.Go(func() {
			url := srv.URL + "/cart/" + strconv.Itoa(c)
			for left.Add(-1) >= 0 {
				t0 := time.Now()
				resp, err := client.Get(url)
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				lat[c] = append(lat[c], time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if bh.close != nil {
		bh.close()
	}
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d requests failed", n)
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(bh.written(perReq*b.N))/elapsed.Seconds(), "records-written/s")
	b.ReportMetric(float64(percentile(all, 0.99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(100*float64(bh.dropped())/float64(perReq*b.N), "%lost")
}
