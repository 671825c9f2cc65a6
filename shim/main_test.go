package shim_test

import (
	"os"
	"testing"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

// echoRole makes the test binary act as the echo program of the Windows
// lane (testkit.ChildEnv(echoRole.Name)): it writes its arguments (after
// argv[0]) to stdout, each followed by NUL, and exits.
var echoRole = testkit.Role{Name: "echo", Run: func(args []string) int {
	for _, a := range args {
		os.Stdout.WriteString(a + "\x00")
	}
	return 0
}}

func TestMain(m *testing.M) {
	testkit.RunIfChild(echoRole)
	os.Exit(m.Run())
}

func osExecutable() (string, error) { return os.Executable() }
