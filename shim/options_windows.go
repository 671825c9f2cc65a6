package shim

import (
	"os"

	"golang.org/x/sys/windows"
)

// OptionsFromOS describes the running Windows machine: the Windows
// directory from GetSystemWindowsDirectory (not the environment, which a
// caller may not control), Program Files from the known-folder API, ComSpec
// from the environment, and a file-existence check for PowerShell 7.
func OptionsFromOS() Options {
	root, err := windows.GetSystemWindowsDirectory()
	if err != nil || root == "" {
		root = os.Getenv("SystemRoot")
	}
	programFiles, err := windows.KnownFolderPath(windows.FOLDERID_ProgramFiles, 0)
	if err != nil || programFiles == "" {
		programFiles = os.Getenv("ProgramFiles")
	}
	return Options{
		GOOS:         "windows",
		ComSpec:      os.Getenv("ComSpec"),
		SystemRoot:   root,
		ProgramFiles: programFiles,
		Exists:       regularFileExists,
	}
}
