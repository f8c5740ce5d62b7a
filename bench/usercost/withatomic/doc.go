// Package withatomic holds usercost's benchmarks in a package that imports
// sync/atomic, as the library's own packages do: the baseline that the
// user's side is compared against. See package usercost.
package withatomic
