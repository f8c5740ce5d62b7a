package tmpfs

import (
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"strconv"
	"syscall"
	"testing"
)

// fsizeEnv names, in the child process of LimitFileSize, its limit.
const fsizeEnv = "SHARDEDSINK_TMPFS_FSIZE"

// LimitFileSize gives the calling test a disk whose files cannot grow past
// bytes: a write past it fails with EFBIG, as a full disk's does, without
// root or a mount. The limit (RLIMIT_FSIZE) is the process's, and would
// fail the test binary's own files too (go test's test log), so the test
// runs again in a child process of the test binary, alone, with the limit
// set (and SIGXFSZ, whose default action kills the process, ignored):
// LimitFileSize returns true there, and the test goes on; in the parent it
// runs the child, fails the test with the child's output unless the child
// passed, and returns false, and the test returns at once:
//
//	if !tmpfs.LimitFileSize(t, 64) {
//		return // the child ran the test
//	}
//
// Only a top-level test may call it.
func LimitFileSize(t *testing.T, bytes uint64) (child bool) {
	t.Helper()
	if os.Getenv(fsizeEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), fsizeEnv+"="+strconv.FormatUint(bytes, 10))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the child process with a file size limit of %d bytes: %v\n%s", bytes, err, out)
		}
		return false
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatalf("getrlimit RLIMIT_FSIZE: %v", err)
	}
	signal.Ignore(syscall.SIGXFSZ)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: bytes, Max: old.Max}); err != nil {
		t.Fatalf("setrlimit RLIMIT_FSIZE: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
			t.Errorf("setrlimit RLIMIT_FSIZE back: %v", err)
		}
	})
	return true
}
