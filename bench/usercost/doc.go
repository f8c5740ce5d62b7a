// Package usercost measures the library's hot paths from a user's side: its
// benchmarks live in a package that imports only the library (and context
// and testing), the way a user's program does, so that the generic code is
// instantiated where sync/atomic is not imported. Package withatomic runs
// the same benchmarks, file for file, with sync/atomic imported, as every
// package of the library does; a test keeps the two files identical but for
// that import.
//
//	go test -run '^$' -bench . -count 10 ./bench/usercost/... | tee user.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col .fullname@pkg user.txt
//
// Before the hot paths moved to sync/atomic's functions, Handle.Push cost
// 9.4 ns in such a package against 6.0 ns with sync/atomic imported (2-core
// VM, go1.26.8). docs/benchmarks.md, "Push costs", has the figures now.
package usercost
