//go:build unix

package probe

import (
	"io/fs"
	"syscall"
)

// fileID returns the device and inode of a file, so a replaced file with
// the same size and time is still told apart.
func fileID(info fs.FileInfo) (dev, ino uint64) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino) //nolint:unconvert // Dev is int32 on darwin
	}
	return 0, 0
}
