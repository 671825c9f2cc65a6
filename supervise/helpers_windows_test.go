package supervise

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/cursorkit/cursorkit/discovery"
)

const nativeKind = discovery.Native

func composeCommandLine(argv []string) string { return windows.ComposeCommandLine(argv) }

func termSignals() []os.Signal { return []os.Signal{os.Interrupt} }

// enableSubreaper has no Windows meaning: the job holds the tree.
func enableSubreaper() error { return nil }

func grandchildAttr(cmd *exec.Cmd, kind string) {
	if kind == "detached" {
		cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS}
	}
}

// treeKinds are the grandchildren of the tree tests; the job holds them all.
var treeKinds = []string{"group", "group", "detached"}
