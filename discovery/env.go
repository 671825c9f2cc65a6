package discovery

import (
	"io/fs"
	"os"
	"runtime"
)

// Env is the machine description the resolver applies its rules to. It is
// a plain value so Windows rules can be exercised on any OS; EnvFromOS
// fills it from the running process.
type Env struct {
	// GOOS selects the rules: "windows" for Windows PATH/PATHEXT semantics,
	// anything else for POSIX semantics.
	GOOS string
	// Path is the PATH value.
	Path string
	// PathExt is the PATHEXT value (Windows only); empty means the default
	// .COM;.EXE;.BAT;.CMD.
	PathExt string
	// Cwd is the absolute current directory. It is never searched for a
	// bare name; on Windows a match there is reported as a warning. A
	// relative configured path is resolved against it, with a warning.
	Cwd string
	// SystemDir is the Windows system directory (GetSystemDirectory, e.g.
	// C:\Windows\System32), where where.exe is looked for.
	SystemDir string
	// LocalAppData is %LOCALAPPDATA%; its Microsoft\WindowsApps folder holds
	// App Execution Alias stubs.
	LocalAppData string
}

// EnvFromOS describes the running machine: PATH and the current directory,
// and on Windows PATHEXT, the system directory from GetSystemDirectory (not
// from %SystemRoot%, which the environment can redirect) and %LOCALAPPDATA%.
func EnvFromOS() Env {
	// An unknown cwd only disables relative configured paths and the cwd report.
	cwd, _ := os.Getwd()
	env := Env{GOOS: runtime.GOOS, Path: os.Getenv("PATH"), Cwd: cwd}
	addWindowsEnv(&env)
	return env
}

// FS is the read-only filesystem view the resolver inspects. Lstat must not
// follow a final symbolic link or reparse point; Stat must.
type FS interface {
	Lstat(name string) (fs.FileInfo, error)
	Stat(name string) (fs.FileInfo, error)
	Readlink(name string) (string, error)
}

// OSFS returns the FS of the running machine (os.Lstat, os.Stat,
// os.Readlink).
func OSFS() FS { return osFS{} }

type osFS struct{}

func (osFS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }
func (osFS) Stat(name string) (fs.FileInfo, error)  { return os.Stat(name) }
func (osFS) Readlink(name string) (string, error)   { return os.Readlink(name) }
