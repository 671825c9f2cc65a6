package supervise

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

const nativeKind = discovery.Native

func composeCommandLine(argv []string) string { return windows.ComposeCommandLine(argv) }

func termSignals() []os.Signal { return []os.Signal{os.Interrupt} }

// grandchildCommand runs exe with marker: "detached" in its own console
// process group without a console, "cmd" through cmd.exe (so the tree holds
// a cmd.exe too), anything else plainly. The job holds them all.
func grandchildCommand(exe, marker, kind string) *exec.Cmd {
	switch kind {
	case "detached":
		cmd := exec.Command(exe, marker)
		cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS}
		return cmd
	case "cmd":
		return testkit.CmdExe(exe, marker)
	}
	return exec.Command(exe, marker)
}

// treeKinds are the grandchildren of the tree tests: cmd.exe running the
// test binary, a plain one and a detached one.
var treeKinds = []string{"cmd", "group", "detached"}
