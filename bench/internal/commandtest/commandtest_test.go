package commandtest

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	Main(m, "echoer", func() {
		fmt.Println(strings.Join(os.Args, " "))
		if len(os.Args) > 1 && os.Args[1] == "fail" {
			os.Exit(3)
		}
	})
}

func TestRunPassesArgumentsAndExitCodes(t *testing.T) {
	code, out := Run(t, "echoer", "-a 1 b")
	if code != 0 || !strings.Contains(out, "echoer -a 1 b") {
		t.Fatalf("exit %d, output %q; want 0 and the command line", code, out)
	}
	code, out = Run(t, "echoer", "fail")
	if code != 3 {
		t.Fatalf("exit %d, output %q; want 3", code, out)
	}
}
