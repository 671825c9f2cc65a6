//go:build windows

package discovery

import (
	"os"
	"runtime"

	"golang.org/x/sys/windows"
)

// EnvFromOS describes the running Windows machine: PATH, PATHEXT, the
// current directory, the system directory from GetSystemDirectory (not from
// %SystemRoot%, which the environment can redirect) and %LOCALAPPDATA%.
func EnvFromOS() Env {
	cwd, _ := os.Getwd() // an unknown cwd only disables the cwd report
	sysDir, err := windows.GetSystemDirectory()
	if err != nil {
		sysDir = ""
	}
	return Env{
		GOOS:         runtime.GOOS,
		Path:         os.Getenv("PATH"),
		PathExt:      os.Getenv("PATHEXT"),
		Cwd:          cwd,
		SystemDir:    sysDir,
		LocalAppData: os.Getenv("LOCALAPPDATA"),
	}
}
