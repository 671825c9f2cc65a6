//go:build !windows

package shim

import "runtime"

// OptionsFromOS describes the running machine. Outside Windows only GOOS
// matters: POSIX targets start directly.
func OptionsFromOS() Options {
	return Options{GOOS: runtime.GOOS, Exists: regularFileExists}
}
