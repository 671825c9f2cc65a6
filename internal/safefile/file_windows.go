//go:build windows

package safefile

import (
	"errors"
	"io"
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

// readAll reads at most limit+1 bytes of a file that Write may be
// replacing concurrently.
// It opens with FILE_SHARE_DELETE so a replace is not blocked by this
// reader, and retries the open briefly while a replace holds the name
// (ERROR_SHARING_VIOLATION / ERROR_ACCESS_DENIED during MoveFileEx).
func readAll(path string, limit int64) ([]byte, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	delay := 2 * time.Millisecond
	for attempt := 0; ; attempt++ {
		h, err := windows.CreateFile(name, windows.GENERIC_READ,
			windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
			nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
		if err == nil {
			f := os.NewFile(uintptr(h), path)
			defer f.Close()
			return io.ReadAll(io.LimitReader(f, limit+1))
		}
		transient := errors.Is(err, windows.ERROR_SHARING_VIOLATION) || errors.Is(err, windows.ERROR_ACCESS_DENIED)
		if !transient || attempt >= 8 {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		time.Sleep(delay)
		delay *= 2
	}
}
