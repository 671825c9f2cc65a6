//go:build windows

package discovery

import (
	"os"

	"golang.org/x/sys/windows"
)

func addWindowsEnv(env *Env) {
	env.PathExt = os.Getenv("PATHEXT")
	env.LocalAppData = os.Getenv("LOCALAPPDATA")
	if dir, err := windows.GetSystemDirectory(); err == nil {
		env.SystemDir = dir
	}
}
