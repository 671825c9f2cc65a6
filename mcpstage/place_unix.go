//go:build !windows

package mcpstage

import "os"

// placeNew gives the file tmp the name target unless target exists
// (an error matching fs.ErrExist): a hard link, which never replaces a
// name; the caller removes tmp.
func placeNew(tmp, target string) error { return os.Link(tmp, target) }
