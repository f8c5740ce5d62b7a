// Package tmpfs sets up a failing disk for the tests of a full disk: a
// small tmpfs (Mount, as root) or a limit on the size of the process's
// files (LimitFileSize); the one copy of that setup for the packages
// that need it.
package tmpfs

import (
	"os"
	"syscall"
	"testing"
)

// Mount mounts a tmpfs of size ("512k") on a new temporary directory,
// mode 0700, unmounted when the test ends, and returns the directory. It
// skips the test, with a message, when the test does not run as root or
// the mount fails.
func Mount(t testing.TB, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, 0) })
	return dir
}
