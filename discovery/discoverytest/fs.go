// Package discoverytest provides an in-memory filesystem view for testing
// code that resolves executables with package discovery, with Windows or
// POSIX path semantics regardless of the OS the test runs on.
package discoverytest

import (
	"errors"
	"io/fs"
	"strings"
	"sync"
	"time"
)

// ErrCannotAccess is what Stat returns for an App Execution Alias stub, as
// Windows does for a reparse point it cannot open.
var ErrCannotAccess = errors.New("the file cannot be accessed by the system")

// FS is an in-memory tree implementing discovery.FS (Lstat, Stat, Readlink).
// A Windows FS compares names case-insensitively, accepts `\` and `/`, and
// ignores trailing dots and spaces in names, as Win32 does. Adding an entry
// creates its parent directories. It is safe for concurrent use.
type FS struct {
	windows bool
	mu      sync.Mutex
	entries map[string]*entry
	lookups []string
}

type entry struct {
	name   string
	mode   fs.FileMode
	size   int64
	target string // symlink target, verbatim
	alias  bool
	denied bool
}

// NewWindows returns an empty FS with Windows path semantics.
func NewWindows() *FS { return &FS{windows: true, entries: map[string]*entry{}} }

// NewPOSIX returns an empty FS with POSIX path semantics.
func NewPOSIX() *FS { return &FS{entries: map[string]*entry{}} }

// File adds a regular file of 100 bytes with permission bits perm.
func (f *FS) File(path string, perm fs.FileMode) *FS {
	return f.add(path, &entry{mode: perm.Perm(), size: 100})
}

// Empty adds a regular zero-byte file with permission bits perm (a file
// that Stat opens, unlike an alias stub).
func (f *FS) Empty(path string, perm fs.FileMode) *FS {
	return f.add(path, &entry{mode: perm.Perm()})
}

// Symlink adds a symbolic link at path pointing to target, which may be
// relative to the link's directory.
func (f *FS) Symlink(path, target string) *FS {
	return f.add(path, &entry{mode: fs.ModeSymlink | 0o777, target: target})
}

// Alias adds an App Execution Alias stub: a zero-byte reparse point that
// Lstat reports as irregular and Stat cannot open.
func (f *FS) Alias(path string) *FS {
	return f.add(path, &entry{mode: fs.ModeIrregular, alias: true})
}

// AliasIrregular adds an App Execution Alias stub as Go 1.23+ reports it
// on Windows: Lstat and Stat both succeed with a zero-byte ModeIrregular
// entry (the reparse tag is not a name surrogate, so Stat does not follow).
func (f *FS) AliasIrregular(path string) *FS {
	return f.add(path, &entry{mode: fs.ModeIrregular})
}

// Dir adds a directory.
func (f *FS) Dir(path string) *FS {
	return f.add(path, &entry{mode: fs.ModeDir | 0o755})
}

// Denied adds an entry whose Lstat and Stat fail with fs.ErrPermission.
func (f *FS) Denied(path string) *FS {
	return f.add(path, &entry{denied: true})
}

// Lookups returns every path given to Lstat or Stat so far, in order.
func (f *FS) Lookups() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.lookups...)
}

func (f *FS) add(path string, e *entry) *FS {
	f.mu.Lock()
	defer f.mu.Unlock()
	comps := f.split(path)
	for i := 1; i < len(comps); i++ {
		key := f.join(comps[:i])
		if _, ok := f.entries[key]; !ok {
			f.entries[key] = &entry{name: comps[i-1], mode: fs.ModeDir | 0o755}
		}
	}
	if len(comps) > 0 {
		e.name = comps[len(comps)-1]
	}
	f.entries[f.join(comps)] = e
	return f
}

// Lstat describes name without following a final symlink.
func (f *FS) Lstat(name string) (fs.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups = append(f.lookups, name)
	e, err := f.get("lstat", name)
	if err != nil {
		return nil, err
	}
	return info{e}, nil
}

// Stat describes name, following symlinks; an alias stub cannot be opened.
func (f *FS) Stat(name string) (fs.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups = append(f.lookups, name)
	cur := name
	for range 40 {
		e, err := f.get("stat", cur)
		if err != nil {
			return nil, &fs.PathError{Op: "stat", Path: name, Err: errors.Unwrap(err)}
		}
		switch {
		case e.alias:
			return nil, &fs.PathError{Op: "stat", Path: name, Err: ErrCannotAccess}
		case e.mode&fs.ModeSymlink == 0:
			return info{e}, nil
		}
		cur = f.resolveTarget(cur, e.target)
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: errors.New("too many levels of symbolic links")}
}

// Readlink returns a symlink's target verbatim.
func (f *FS) Readlink(name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, err := f.get("readlink", name)
	if err != nil {
		return "", err
	}
	if e.mode&fs.ModeSymlink == 0 {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: errors.New("not a symbolic link")}
	}
	return e.target, nil
}

func (f *FS) get(op, name string) (*entry, error) {
	e, ok := f.entries[f.join(f.split(name))]
	switch {
	case !ok:
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	case e.denied:
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrPermission}
	}
	return e, nil
}

func (f *FS) isAbs(p string) bool {
	if !f.windows {
		return strings.HasPrefix(p, "/")
	}
	return (len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/')) ||
		strings.HasPrefix(p, `\\`) || strings.HasPrefix(p, "//")
}

func (f *FS) resolveTarget(link, target string) string {
	if f.isAbs(target) {
		return target
	}
	return link + "/../" + target // split applies the `..`
}

// split turns a path into its canonical components, applying `.` and `..`
// and, on Windows, case folding and trailing dot/space stripping.
func (f *FS) split(p string) []string {
	var comps []string
	for _, c := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || (f.windows && r == '\\') }) {
		if f.windows {
			if t := strings.TrimRight(c, ". "); t != "" {
				c = strings.ToLower(t)
			}
		}
		switch c {
		case ".":
			continue
		case "..":
			if len(comps) > 0 {
				comps = comps[:len(comps)-1]
			}
			continue
		}
		comps = append(comps, c)
	}
	return comps
}

func (f *FS) join(comps []string) string { return strings.Join(comps, "/") }

type info struct{ e *entry }

func (i info) Name() string       { return i.e.name }
func (i info) Size() int64        { return i.e.size }
func (i info) Mode() fs.FileMode  { return i.e.mode }
func (i info) ModTime() time.Time { return time.Time{} }
func (i info) IsDir() bool        { return i.e.mode.IsDir() }
func (i info) Sys() any           { return nil }
