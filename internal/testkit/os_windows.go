package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/windows"
)

// underWine looks for ntdll's wine_get_version export, which only Wine has.
func underWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}

// CmdExe returns a command that runs exe with one argument (a marker: it is
// not quoted) through cmd.exe, so that a tree holds a cmd.exe too.
func CmdExe(exe, arg string) *exec.Cmd {
	cmdPath := filepath.Join(os.Getenv("SystemRoot"), "System32", "cmd.exe")
	cmd := exec.Command(cmdPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: fmt.Sprintf(`"%s" /d /s /c ""%s" %s"`, cmdPath, exe, arg)}
	return cmd
}
