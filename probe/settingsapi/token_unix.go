//go:build unix

package settingsapi

import (
	"io/fs"
	"os"
	"syscall"

	"github.com/cursorkit/cursorkit/failure"
)

// checkPrivate refuses a token file that another user owns (root aside)
// or that the group or others may access, as ssh does for keys
// (docs/contract.md, "The settings validation endpoint").
func checkPrivate(path string, info fs.FileInfo) error {
	return checkPrivateFor(path, info, os.Geteuid())
}

// checkPrivateFor is checkPrivate for the user euid.
func checkPrivateFor(path string, info fs.FileInfo, euid int) error {
	if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Uid != 0 && int64(st.Uid) != int64(euid) {
		return failure.New(failure.Setup, "the token file %s is owned by user %d, not by you (user %d) or root; use a token file of your own", path, st.Uid, euid)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return failure.New(failure.Setup, "the token file %s has mode %#o; it must be private to its owner (chmod 600)", path, perm)
	}
	return nil
}
