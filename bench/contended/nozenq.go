//go:build !zenq

package main

// buildFlags are the go command flags the binary was built with: none
// without the zenq tag.
const buildFlags = ""

// extraSharded has no rows without the zenq build tag; bench/contended/run.sh
// builds with it.
func extraSharded[T any]() []*impl[T] { return nil }
