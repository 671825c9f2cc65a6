//go:build unix

package launch_test

import (
	"os/exec"
	"strings"
	"syscall"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

// osRoles are the child roles of this OS's tests alone.
func osRoles() []testkit.Role { return nil }

func composeCommandLine(argv []string) string { return strings.Join(argv, " ") }

// cmdExeCommand is Windows-only; POSIX trees never ask for a "cmd" kind.
func cmdExeCommand(exe, marker string) *exec.Cmd { return exec.Command(exe, marker) }

// grandchildAttr makes a "setsid" grandchild leave the group and session.
func grandchildAttr(cmd *exec.Cmd, kind string) error {
	if kind == "setsid" || kind == "envless" {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	return nil
}

// supervisorKinds are the grandchildren of TestNothingOutlivesAKilledSupervisor.
var supervisorKinds = []string{"group", "setsid", "daemon", "envless-daemon"}

// treeKinds are the grandchildren of the common tree tests.
var treeKinds = []string{"group", "group", "setsid"}

// benchTreeKinds make a tree of ten processes with the root.
var benchTreeKinds = []string{"group", "group", "group", "group", "group", "group", "group", "group", "setsid"}
