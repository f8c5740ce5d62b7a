//go:build !unix

package spill

import "os"

// lockFile takes no lock across processes where the standard library has
// no flock: only the in-process lock of Open keeps a directory to one Log.
func lockFile(*os.File) error { return nil }
