package launch_test

import (
	"os"

	"github.com/cursorkit/cursorkit/shim"
)

// selfPlan is a plan that starts this test binary with args; the helper
// mode travels in the environment (childEnv).
func selfPlan(args ...string) shim.Command {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	argv := append([]string{exe}, args...)
	return shim.Command{Program: exe, Args: argv, CommandLine: composeCommandLine(argv), Target: exe}
}
