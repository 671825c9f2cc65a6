//go:build !windows

package probe

import "os"

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

// readFile reads a file that writeFileAtomic may be replacing concurrently.
func readFile(path string) ([]byte, error) { return os.ReadFile(path) }
