package launch_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/windows"
)

func composeCommandLine(argv []string) string { return windows.ComposeCommandLine(argv) }

// cmdExeCommand runs exe through cmd.exe, so the tree holds a cmd.exe too.
func cmdExeCommand(exe, marker string) *exec.Cmd {
	cmdPath := filepath.Join(os.Getenv("SystemRoot"), "System32", "cmd.exe")
	cmd := exec.Command(cmdPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: fmt.Sprintf(`"%s" /d /s /c ""%s" %s"`, cmdPath, exe, marker)}
	return cmd
}

func grandchildAttr(*exec.Cmd, string) error { return nil }

// treeKinds are the grandchildren of the common tree tests.
var treeKinds = []string{"group", "cmd", "group"}

// benchTreeKinds make a tree of ten processes with the root (cmd.exe
// counts as one).
var benchTreeKinds = []string{"group", "group", "group", "group", "group", "group", "cmd"}
