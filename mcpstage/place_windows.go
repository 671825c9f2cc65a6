package mcpstage

import (
	"os"

	"golang.org/x/sys/windows"
)

// placeNew moves the file tmp to target unless target exists (an error
// matching fs.ErrExist): MoveFileEx without MOVEFILE_REPLACE_EXISTING,
// which os.Rename sets. Not a hard link: Wine reports a link it made as
// missing.
func placeNew(tmp, target string) error {
	from, err := windows.UTF16PtrFromString(tmp)
	if err != nil {
		return &os.LinkError{Op: "movefile", Old: tmp, New: target, Err: err}
	}
	to, err := windows.UTF16PtrFromString(target)
	if err != nil {
		return &os.LinkError{Op: "movefile", Old: tmp, New: target, Err: err}
	}
	if err := windows.MoveFileEx(from, to, 0); err != nil {
		return &os.LinkError{Op: "movefile", Old: tmp, New: target, Err: err}
	}
	return nil
}
