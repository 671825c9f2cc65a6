//go:build !windows

package safefile

import (
	"io"
	"os"
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

// readAll reads at most limit+1 bytes of a file that Write may be
// replacing concurrently.
func readAll(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit+1))
}
