// Package commandtest lets a bench command's tests run the command itself,
// through its real main, flag parsing and exit codes: the test binary
// re-executes itself with an environment variable that makes TestMain call
// main instead of the tests.
package commandtest

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// envRun and envArgs name the variables that ask the re-executed binary to
// run the command named name, with arguments.
func envRun(name string) string  { return strings.ToUpper(name) + "_RUN_MAIN" }
func envArgs(name string) string { return strings.ToUpper(name) + "_ARGS" }

// Main is a command's TestMain: it runs main with the arguments Run passed
// when the binary was re-executed by Run, and otherwise the tests, checking
// for leaked goroutines with goleak (opts as for goleak.VerifyTestMain).
func Main(m *testing.M, name string, main func(), opts ...goleak.Option) {
	if os.Getenv(envRun(name)) == "1" {
		os.Args = append([]string{name}, strings.Fields(os.Getenv(envArgs(name)))...)
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m, opts...)
}

// Run runs the test binary as the command named name with args (split on
// spaces) and returns its exit code and combined output. A failure to start
// the binary fails t.
func Run(t testing.TB, name, args string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envRun(name)+"=1", envArgs(name)+"="+args)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatalf("running %s %s: %v", name, args, err)
	}
	return 0, string(out)
}
