//go:build !unix

package probe

import "io/fs"

// fileID is zero where a Stat does not carry a file ID cheaply (Windows
// needs an open handle for it): size and time identify the file there.
func fileID(fs.FileInfo) (dev, ino uint64) { return 0, 0 }
