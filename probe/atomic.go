package probe

import (
	"os"
	"path/filepath"
)

// writeFileAtomic replaces path with data so that a reader sees either the
// old or the new content, never a mix: a temporary file in the same
// directory is written, synced and renamed over path, and the directory is
// synced where the OS allows it. The directory is created (0700) when
// missing. perm applies to a new file; an existing file keeps its mode.
func writeFileAtomic(path string, data []byte, perm os.FileMode) (err error) {
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
