package shim_test

import (
	"os"
	"testing"
)

// echoEnv makes the test binary act as the echo program of the Windows
// lane: it writes its arguments (after argv[0]) to stdout, each followed
// by NUL, and exits.
const echoEnv = "CURSORKIT_SHIM_TEST_ECHO"

func TestMain(m *testing.M) {
	if os.Getenv(echoEnv) == "1" {
		for _, a := range os.Args[1:] {
			os.Stdout.WriteString(a + "\x00")
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func osExecutable() (string, error) { return os.Executable() }
