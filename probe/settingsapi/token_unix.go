//go:build unix

package settingsapi

import (
	"io/fs"

	"github.com/cursorkit/cursorkit/failure"
)

// checkPrivate refuses a token file the group or others may access.
func checkPrivate(path string, info fs.FileInfo) error {
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return failure.New(failure.Setup, "the token file %s has mode %#o; it must be private to its owner (chmod 600)", path, perm)
	}
	return nil
}
