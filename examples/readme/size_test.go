package main

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// The front page's budget: a reader takes it in at a glance, and a diff
// of it reads without scrolling sideways.
const (
	readmeMaxBytes = 7168
	readmeMaxLine  = 200 // characters
)

// TestTheFrontPageKeepsItsBudget fails when README.md grows past
// readmeMaxBytes or one of its lines past readmeMaxLine characters. The
// generated blocks are wrapped by their generators (report.Wrap in the
// bench module). The guarantees block is exempt from the line limit for
// now: sink/readme_test.go holds it to sink's package doc, which is being
// rewritten, and its lines will be wrapped with it.
func TestTheFrontPageKeepsItsBudget(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	require.LessOrEqual(t, len(raw), readmeMaxBytes, "README.md is %d bytes; shorten its prose", len(raw))
	inGuarantees := false
	for i, line := range strings.Split(string(raw), "\n") {
		switch {
		case strings.HasPrefix(line, "<!-- guarantees:begin"):
			inGuarantees = true
		case strings.HasPrefix(line, "<!-- guarantees:end"):
			inGuarantees = false
		case !inGuarantees:
			n := utf8.RuneCountInString(line)
			require.LessOrEqual(t, n, readmeMaxLine, "README.md:%d is %d characters long", i+1, n)
		}
	}
}
