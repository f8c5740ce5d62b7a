//go:build !race

package machine

// StoreRelease stores v at addr with release ordering; see the package
// documentation for what it orders and what it does not. On amd64 it is one
// plain MOV in an assembly function, which the compiler does not inline
// and does not move memory accesses across.
//
//go:noescape
func StoreRelease(addr *uint64, v uint64)
