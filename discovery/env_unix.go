//go:build !windows

package discovery

import (
	"os"
	"runtime"
)

// EnvFromOS describes the running POSIX machine: its PATH and current
// directory.
func EnvFromOS() Env {
	cwd, _ := os.Getwd() // an unknown cwd only disables relative configured paths
	return Env{GOOS: runtime.GOOS, Path: os.Getenv("PATH"), Cwd: cwd}
}
