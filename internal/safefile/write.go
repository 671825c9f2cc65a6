// Package safefile writes files so that no reader ever sees one half
// written, and reads files a writer may be replacing, on every OS.
package safefile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces path with data so that a reader sees either the
// old or the new content, never a mix: a temporary file in the same
// directory is written, synced and renamed over path, and the directory is
// synced where the OS allows it. The directory is created (0700) when
// missing. perm applies to a new file; an existing file keeps its mode.
func Write(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if info, statErr := os.Stat(path); statErr == nil {
		perm = info.Mode().Perm()
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
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
	if err = replaceFile(tmp.Name(), path); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// Read reads the file at path, which Write may be replacing concurrently
// (on Windows a replace and a read would otherwise block each other), and
// returns at most limit bytes; a longer file is an *TooLargeError.
func Read(path string, limit int64) ([]byte, error) {
	data, err := readAll(path, limit)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	return data, nil
}

// TooLargeError says a file is longer than the limit it was read with.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %d bytes", e.Path, e.Limit)
}
