//go:build unix

package supervise

import (
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/cursorkit/cursorkit/discovery"
)

const nativeKind = discovery.POSIX

func composeCommandLine(argv []string) string { return strings.Join(argv, " ") }

func termSignals() []os.Signal { return []os.Signal{syscall.SIGTERM} }

// grandchildCommand runs exe with marker; a "setsid" grandchild leaves
// the group and the session.
func grandchildCommand(exe, marker, kind string) *exec.Cmd {
	cmd := exec.Command(exe, marker)
	if kind == "setsid" {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	return cmd
}

// treeKinds are the grandchildren of the tree tests: two in the group and
// one setsid escapee.
var treeKinds = []string{"group", "group", "setsid"}
