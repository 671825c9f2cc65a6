package launch_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"golang.org/x/sys/windows"

	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/launch"
)

// osRoles are the child roles of the Windows tests alone.
func osRoles() []testkit.Role {
	return []testkit.Role{{Name: "paused-supervisor", Run: runPausedSupervisor}}
}

// runPausedSupervisor (args: "job-list" or "fallback", marker) launches a
// sleeper and stops for good right after CreateProcess created it: it
// reports "created PID" and sleeps, so a test can kill it in the window
// between CreateProcess and the child's start (and, for "fallback", its job
// assignment).
func runPausedSupervisor(args []string) int {
	_, err := launch.StartPaused(context.Background(), selfPlan(args[1]), launch.Options{Env: testkit.ChildEnv("sleep")},
		args[0] == "fallback", func(pid int) {
			fmt.Printf("created %d\n", pid)
			testkit.SleepForever()
		})
	fmt.Fprintln(os.Stderr, "the pause returned:", err)
	return 1
}

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
