package shim

import "os"

// regularFileExists reports whether path names a regular file, following
// links. App Execution Alias stubs fail os.Stat and so do not count, which
// is what the PowerShell 7 lookup wants: it launches only real installs.
func regularFileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
