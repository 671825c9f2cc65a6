package launch_test

import (
	"os/exec"

	"golang.org/x/sys/windows"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

func composeCommandLine(argv []string) string { return windows.ComposeCommandLine(argv) }

// cmdExeCommand runs exe through cmd.exe, so the tree holds a cmd.exe too.
func cmdExeCommand(exe, marker string) *exec.Cmd { return testkit.CmdExe(exe, marker) }

func grandchildAttr(*exec.Cmd, string) error { return nil }

// supervisorKinds are the grandchildren of TestNothingOutlivesAKilledSupervisor.
var supervisorKinds = []string{"group", "cmd", "daemon"}

// treeKinds are the grandchildren of the common tree tests.
var treeKinds = []string{"group", "cmd", "group"}

// benchTreeKinds make a tree of ten processes with the root (cmd.exe
// counts as one).
var benchTreeKinds = []string{"group", "group", "group", "group", "group", "group", "cmd"}
