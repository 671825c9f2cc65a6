//go:build !windows

package safefile

import (
	"os"
	"syscall"
)

// replaceFile renames from over to; rename(2) is atomic on POSIX.
func replaceFile(from, to string) error { return os.Rename(from, to) }

// syncDir makes a rename durable. Failures are ignored: the rename itself
// already happened and some filesystems refuse to sync directories.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

func chmodUnsupported() bool { return false }

// openRegular opens path for reading without ever blocking: O_NONBLOCK
// makes the open of a FIFO return at once instead of waiting for a writer
// (its type is then refused from fstat by the caller, before any read),
// and O_NOCTTY keeps a terminal from becoming the controlling one. A
// path that already names something other than a regular file is refused
// before the open, because opening some devices acts by itself (a
// watchdog arms, a tape rewinds); the caller's fstat of the opened file
// is what decides, so a swap after this stat changes nothing.
func openRegular(path string) (*os.File, error) {
	if info, err := os.Stat(path); err == nil && !info.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: info.Mode()}
	}
	return openNonBlocking(path)
}

// openNonBlocking opens path read-only with O_NONBLOCK and O_NOCTTY; on a
// regular file O_NONBLOCK changes nothing.
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}
