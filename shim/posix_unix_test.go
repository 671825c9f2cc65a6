//go:build unix

package shim_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/shim"
)

// TestShellQuoteRoundTripsThroughSh pastes a POSIX plan's display command
// line into sh and checks that printf sees exactly the plan's argv.
func TestShellQuoteRoundTripsThroughSh(t *testing.T) {
	sh, err := exec.LookPath("sh")
	require.NoError(t, err)
	for i, args := range append(append([][]string{}, rustBatVectors...), extraBatVectors...) {
		args = append(args, "it's", `$(touch file.txt)`, "`x`", `a\'b`, "~", "*")
		plan, err := shim.Build(discovery.Resolution{Path: "/usr/bin/printf"}, args, shim.Options{GOOS: "linux"})
		require.NoError(t, err)
		// printf's format is the first argument; give it one of our own.
		line := strings.Replace(plan.CommandLine, "/usr/bin/printf", `/usr/bin/printf '%s\0'`, 1)
		cmd := exec.Command(sh, "-c", line)
		cmd.Dir = t.TempDir()
		out, err := cmd.Output()
		require.NoError(t, err, "vector %d: %s", i, line)
		assert.Equal(t, strings.Join(args, "\x00")+"\x00", string(out), "vector %d: %s", i, line)
	}
}
