package task

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cursorkit/cursorkit/failure"
)

// Where the Cursor CLI keeps its chats under a home (docs/contract.md,
// "Jobs", with the sources): <root>/<workspace-hash>/<session-id>/store.db
// (a SQLite database with its -wal and -shm files), the workspace hash
// being the MD5 of the workspace's path. Older builds use .cursor/chats,
// newer ones .config/cursor/chats ($XDG_CONFIG_HOME/cursor, which the
// task's environment leaves to follow the private home).
func chatRoots() []string {
	return []string{filepath.Join(".cursor", "chats"), filepath.Join(".config", "cursor", "chats")}
}

// Bounds of a chat copy.
const (
	MaxChatFiles = 10000
	MaxChatBytes = 1 << 30
)

// ChatCopy says what CopyChat copied.
type ChatCopy string

const (
	// ChatSession: the session's own directory, found by its id.
	ChatSession ChatCopy = "session"
	// ChatAll: the session's directory was not found under any workspace
	// hash (Cursor's layout changed?), so every chat tree was copied,
	// the documented fallback.
	ChatAll ChatCopy = "all"
	// ChatNone: the home holds no chat tree at all; nothing was copied
	// (Cursor may keep the session elsewhere; the resume is still tried).
	ChatNone ChatCopy = "none"
)

// CopyChat copies the chat of session from one private home into another
// (a resume's new home, before launch): every <root>/<hash>/<session>
// directory of fromHome to the same place under toHome, else, when no such
// directory exists, every chat root whole (ChatAll). Nothing outside
// fromHome is read: a symbolic link, or anything but a directory or a
// regular file, anywhere in what would be copied is failure.Setup and
// nothing is copied; so is a copy of more than MaxChatFiles files or
// MaxChatBytes bytes. A session id that could name anything but one
// directory entry is failure.Input. Each root is copied into a temporary
// directory beside its destination and renamed into place, so a crash
// leaves no half chat under a name Cursor reads.
func CopyChat(fromHome, toHome, session string) (ChatCopy, error) {
	if err := checkSessionID(session); err != nil {
		return "", err
	}
	type pair struct{ from, to string }
	var found, roots []pair
	for _, root := range chatRoots() {
		from := filepath.Join(fromHome, root)
		if err := plainDirs(fromHome, root); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return "", err
		}
		roots = append(roots, pair{from, filepath.Join(toHome, root)})
		hashes, err := dirNames(from)
		if err != nil {
			return "", failure.Wrap(failure.Setup, err, "listing the chats of the parent job's home")
		}
		for _, h := range hashes {
			if err := plainDirs(from, h); err != nil {
				return "", err // a link here could lead anywhere
			}
			dir := filepath.Join(from, h, session)
			if info, err := os.Lstat(dir); err == nil && info.IsDir() {
				found = append(found, pair{dir, filepath.Join(toHome, root, h, session)})
			}
		}
	}
	what, copies := ChatSession, found
	if len(found) == 0 {
		what, copies = ChatAll, roots
	}
	if len(copies) == 0 {
		return ChatNone, nil
	}
	var b budget
	for _, c := range copies {
		if err := b.check(c.from); err != nil {
			return "", err
		}
	}
	for _, c := range copies {
		if err := copyTree(c.from, c.to); err != nil {
			return "", err
		}
	}
	return what, nil
}

// checkSessionID refuses a session id that could name anything but one
// directory entry (Cursor's are UUIDs; only that much is assumed).
func checkSessionID(session string) error {
	bad := session == "" || session == "." || session == ".." || len(session) > 200 || strings.ContainsAny(session, `/\:`)
	for _, r := range session {
		if r < 0x20 || r == 0x7f {
			bad = true
		}
	}
	if bad {
		return failure.New(failure.Input, "%s is not a Cursor session id", quoteBounded(session))
	}
	return nil
}

// quoteBounded quotes at most 80 bytes of s.
func quoteBounded(s string) string {
	if len(s) > 80 {
		return strconv.Quote(s[:80]) + "…"
	}
	return strconv.Quote(s)
}

// dirNames is a directory's entry names, unsorted.
func dirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// plainDirs checks that every element of rel below home is a directory,
// not a link: a missing one's error (failure.Setup) wraps fs.ErrNotExist.
func plainDirs(home, rel string) error {
	p := home
	for _, el := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, el)
		info, err := os.Lstat(p)
		if err != nil {
			return failure.Wrap(failure.Setup, err, "reading the parent job's chats")
		}
		if !info.IsDir() {
			return failure.New(failure.Setup, "%s in the parent job's home is not a plain directory (%s); the chat is not copied", p, info.Mode().Type())
		}
	}
	return nil
}

// budget counts what a copy would take.
type budget struct{ files, bytes int64 }

func (b *budget) check(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return failure.Wrap(failure.Setup, err, "reading the parent job's chat")
		}
		switch {
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return failure.New(failure.Setup, "%s in the parent job's chat is not a regular file (%s); the chat is not copied", path, d.Type())
		}
		info, err := d.Info()
		if err != nil {
			return failure.Wrap(failure.Setup, err, "reading the parent job's chat")
		}
		b.files++
		b.bytes += info.Size()
		if b.files > MaxChatFiles || b.bytes > MaxChatBytes {
			return failure.New(failure.Setup, "the parent job's chat is over %d files or %d bytes; it is not copied", MaxChatFiles, MaxChatBytes)
		}
		return nil
	})
}

// copyTree copies directory from to to (which must not exist) through a
// temporary sibling renamed into place; a link or special file met on the
// way (one made since the check) fails the copy, which then leaves
// nothing.
func copyTree(from, to string) (err error) {
	if _, err := os.Lstat(to); err == nil {
		return failure.New(failure.Setup, "%s already exists in the new job's home", to)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return failure.Wrap(failure.Setup, err, "preparing the new job's chat directory")
	}
	tmp, err := os.MkdirTemp(filepath.Dir(to), "."+filepath.Base(to)+".*.tmp")
	if err != nil {
		return failure.Wrap(failure.Setup, err, "preparing the new job's chat directory")
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(tmp)
		}
	}()
	src, err := os.OpenRoot(from)
	if err != nil {
		return failure.Wrap(failure.Setup, err, "opening the parent job's chat")
	}
	defer src.Close()
	err = fs.WalkDir(src.FS(), ".", func(rel string, d fs.DirEntry, werr error) error {
		if werr != nil {
			return failure.Wrap(failure.Setup, werr, "reading the parent job's chat")
		}
		dst := filepath.Join(tmp, filepath.FromSlash(rel))
		switch {
		case rel == ".":
			return nil
		case d.IsDir():
			return os.Mkdir(dst, 0o700)
		case !d.Type().IsRegular():
			return failure.New(failure.Setup, "%s in the parent job's chat is not a regular file; the chat is not copied", rel)
		}
		in, err := src.Open(rel)
		if err != nil {
			return failure.Wrap(failure.Setup, err, "reading the parent job's chat")
		}
		defer in.Close()
		if info, err := in.Stat(); err != nil || !info.Mode().IsRegular() {
			return failure.New(failure.Setup, "%s in the parent job's chat is not a regular file; the chat is not copied", rel)
		}
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return failure.Wrap(failure.Setup, err, "writing the new job's chat")
		}
		_, err = io.Copy(out, io.LimitReader(in, MaxChatBytes))
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return failure.Wrap(failure.Setup, err, "copying the parent job's chat")
		}
		return nil
	})
	if err != nil {
		var fe *failure.Error
		if !errors.As(err, &fe) {
			err = failure.Wrap(failure.Setup, err, "copying the parent job's chat")
		}
		return err
	}
	if err := os.Rename(tmp, to); err != nil {
		return failure.Wrap(failure.Setup, err, "placing the new job's chat")
	}
	return nil
}
