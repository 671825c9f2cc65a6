//go:build windows

package safefile

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// replaceFile renames from over to with MoveFileEx(REPLACE_EXISTING |
// WRITE_THROUGH), which os.Rename also uses. A reader holding the target
// open without FILE_SHARE_DELETE makes it fail with a sharing or access
// error for as long as it reads, so a few short retries ride that out.
func replaceFile(from, to string) error {
	fromW, err := windows.UTF16PtrFromString(from)
	if err != nil {
		return err
	}
	toW, err := windows.UTF16PtrFromString(to)
	if err != nil {
		return err
	}
	delay := 2 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err = windows.MoveFileEx(fromW, toW, windows.MOVEFILE_REPLACE_EXISTING|windows.MOVEFILE_WRITE_THROUGH)
		if err == nil {
			return nil
		}
		transient := errors.Is(err, windows.ERROR_SHARING_VIOLATION) || errors.Is(err, windows.ERROR_ACCESS_DENIED)
		if !transient || attempt >= 8 {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
		}
		time.Sleep(delay)
		delay *= 2
	}
}

// syncDir does nothing: MOVEFILE_WRITE_THROUGH already flushed the rename
// and Windows cannot open a directory for syncing through os.Open.
func syncDir(string) {}

// chmodUnsupported reports that Chmod on Windows only toggles the
// read-only bit, so its errors are not worth failing a save for.
func chmodUnsupported() bool { return true }

// openRegular opens path for reading; the caller refuses what is not a
// regular file from the handle's own type (GetFileType behind File.Stat:
// a pipe, a console or another device) before reading anything.
//
// The open itself never blocks: CreateFile on a named pipe with no free
// instance fails at once with ERROR_PIPE_BUSY rather than waiting (only
// WaitNamedPipe waits), and FILE_FLAG_BACKUP_SEMANTICS lets a directory
// open so that it is refused as one (os.Open does the same). It shares
// delete access so a concurrent Write's MoveFileEx is not blocked by this
// reader, and retries briefly while a replace holds the name
// (ERROR_SHARING_VIOLATION or ERROR_ACCESS_DENIED during MoveFileEx).
func openRegular(path string) (*os.File, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	delay := 2 * time.Millisecond
	for attempt := 0; ; attempt++ {
		h, err := windows.CreateFile(name, windows.GENERIC_READ,
			windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
			nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
		if err == nil {
			return os.NewFile(uintptr(h), path), nil
		}
		transient := errors.Is(err, windows.ERROR_SHARING_VIOLATION) || errors.Is(err, windows.ERROR_ACCESS_DENIED)
		if !transient || attempt >= 8 {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		time.Sleep(delay)
		delay *= 2
	}
}
