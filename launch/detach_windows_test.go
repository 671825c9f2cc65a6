package launch_test

import "testing"

// callerEnds are how the caller of a detached start ends (TerminateProcess
// of the caller is not tested apart: a Windows child has no tie to its
// parent's life).
var callerEnds = []string{"exit", "sigkill"}

// checkDetached: no session or terminal to check on Windows.
func checkDetached(*testing.T, int) {}
