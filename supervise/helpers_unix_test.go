//go:build unix

package supervise

import (
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/launch"
)

const nativeKind = discovery.POSIX

func composeCommandLine(argv []string) string { return strings.Join(argv, " ") }

func termSignals() []os.Signal { return []os.Signal{syscall.SIGTERM} }

func enableSubreaper() error { return launch.EnableSubreaper() }

// grandchildAttr makes a "setsid" grandchild leave the group and session.
func grandchildAttr(cmd *exec.Cmd, kind string) {
	if kind == "setsid" {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
}

// treeKinds are the grandchildren of the tree tests: two in the group and
// one setsid escapee.
var treeKinds = []string{"group", "group", "setsid"}
