// Package safefile writes files so that no reader ever sees one half
// written, and reads operator-named files safely, on every OS: without
// blocking on a FIFO, only regular files, and never more than a bound.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with data so that a reader sees either the
// old or the new content, never a mix: a temporary file in the same
// directory is written, synced and renamed over path, and the directory is
// synced where the OS allows it. The directory is created (0700) when
// missing. perm applies to a new file; an existing file keeps its mode.
//
// A symbolic link at path is followed, never replaced: the file it points
// to is replaced (the temporary file is made beside that file), so the
// link and everything else the operator keeps stay as they are. A link to
// a missing file is a *BrokenLinkError and an existing path that is not a
// regular file a *NotRegularError; nothing is written then
// (docs/contract.md, "Settings").
func Write(path string, data []byte, perm os.FileMode) (err error) {
	target, err := writeTarget(path)
	if err != nil {
		return err
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if info, statErr := os.Stat(target); statErr == nil {
		if !info.Mode().IsRegular() {
			return &NotRegularError{Path: path, Mode: info.Mode()}
		}
		perm = info.Mode().Perm()
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(perm); err != nil && !chmodUnsupported() {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = replaceFile(tmp.Name(), target); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// writeTarget returns the file Write replaces for path: path itself, or
// the file a symbolic link at path leads to (every link followed).
func writeTarget(path string) (string, error) {
	info, err := os.Lstat(path)
	if err != nil || info.Mode()&fs.ModeSymlink == 0 {
		return path, nil // a missing path is created; other errors surface later
	}
	target, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", &BrokenLinkError{Path: path}
	}
	if err != nil {
		return "", err
	}
	return target, nil
}

// Read reads the regular file at path, which Write may be replacing
// concurrently, and returns at most limit bytes. It is ReadChecked without
// a check.
func Read(path string, limit int64) ([]byte, error) {
	return ReadChecked(path, limit, nil)
}

// ReadChecked reads the file at path for an operator-named setting. The
// open never blocks (a FIFO does not wait for a writer), symbolic links
// are followed, and the opened file itself (fstat, so no rename in between
// can swap it) must be a regular file, else a *NotRegularError. check,
// when not nil, is called with that file's information before anything is
// read, and its error is returned as it is. At most limit+1 bytes are
// read: a longer file is a *TooLargeError, however large it is. A missing
// file's error satisfies errors.Is(err, fs.ErrNotExist). On Windows a
// concurrent Write neither blocks nor is blocked by the read.
func ReadChecked(path string, limit int64, check func(fs.FileInfo) error) ([]byte, error) {
	r, info, err := open(path, limit)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if check != nil {
		if err := check(info); err != nil {
			return nil, err
		}
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return data, nil
}

// Open opens the file at path for reading as a stream, as safely as
// ReadChecked reads it: the open never blocks, symbolic links are
// followed, the opened file must be a regular file (else a
// *NotRegularError) no longer than limit bytes (else a *TooLargeError).
// The Reader yields at most limit bytes: a file that grows past them while
// it is read ends in a *TooLargeError. A missing file's error satisfies
// errors.Is(err, fs.ErrNotExist). The caller closes the Reader.
func Open(path string, limit int64) (*Reader, error) {
	r, _, err := open(path, limit)
	return r, err
}

// open is Open, with the opened file's information.
func open(path string, limit int64) (*Reader, fs.FileInfo, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	switch {
	case err != nil:
	case !info.Mode().IsRegular():
		err = &NotRegularError{Path: path, Mode: info.Mode()}
	case info.Size() > limit:
		err = &TooLargeError{Path: path, Limit: limit}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return &Reader{f: f, path: path, limit: limit}, info, nil
}

// Reader reads a regular file opened by Open, at most its limit.
type Reader struct {
	f     *os.File
	path  string
	limit int64
	n     int64 // bytes read from f, at most limit+1
}

// Read reads the file on; past limit bytes it returns a *TooLargeError
// and none of the bytes beyond.
func (r *Reader) Read(p []byte) (int, error) {
	if r.n > r.limit {
		return 0, &TooLargeError{Path: r.path, Limit: r.limit}
	}
	// One byte past the limit tells a file that is longer from one that
	// ends there.
	if rest := r.limit - r.n + 1; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := r.f.Read(p)
	r.n += int64(n)
	if r.n > r.limit {
		return n - 1, &TooLargeError{Path: r.path, Limit: r.limit}
	}
	return n, err
}

// Close closes the file.
func (r *Reader) Close() error { return r.f.Close() }

// TooLargeError says a file is longer than the limit it was read with.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %d bytes", e.Path, e.Limit)
}

// NotRegularError says a path names something other than a regular file
// (after following symbolic links): a directory, a FIFO, a device, a
// socket. Nothing of it was read or written.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is not a regular file but %s", e.Path, describeType(e.Mode))
}

// describeType names a file type for people.
func describeType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file"
}

// BrokenLinkError says a path is a symbolic link whose target does not
// exist; Write does not create files through such a link.
type BrokenLinkError struct {
	Path string
}

func (e *BrokenLinkError) Error() string {
	return fmt.Sprintf("%s is a symbolic link to a file that does not exist", e.Path)
}

// Problem says why Read or ReadChecked refused path, without the path,
// for a message that names it: "does not exist", "is larger than N
// bytes", "is not a regular file", "is not readable (permission
// denied)"; "" for any other error.
func Problem(err error) string {
	var tooLarge *TooLargeError
	var notRegular *NotRegularError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "does not exist"
	case errors.As(err, &tooLarge):
		return fmt.Sprintf("is larger than %d bytes", tooLarge.Limit)
	case errors.As(err, &notRegular):
		return "is not a regular file"
	case errors.Is(err, fs.ErrPermission):
		return "is not readable (permission denied)"
	}
	return ""
}
