package mcpstage

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/internal/safefile"
)

// The exclusion block in info/exclude. One block per exclude
// file, shared by the linked worktrees of a repository:
//
//	# >>> cursorkit >>>
//	/.cursor/mcp.json
//	/.cursor/.cursorkit-mcp-state.json
//	/.cursor/.cursorkit-mcp.lock/
//	# worktree: /abs/root/of/a/worktree
//	# <<< cursorkit <<<
//
// When addExclusion had to end the file's last line to append the block,
// the line excludeJoinedLine follows the start marker, so that the last
// removal gives that byte back too: add then remove leaves the file
// byte for byte as it was.
const (
	excludeStartMarker = "# >>> cursorkit >>>"
	excludeEndMarker   = "# <<< cursorkit <<<"
	excludeRootPrefix  = "# worktree: "
	excludeJoinedLine  = "# (cursorkit ended the line above this block)"
	// excludeMaxBytes bounds the exclude file read (git's own are a few
	// hundred bytes).
	excludeMaxBytes = 4 << 20
	// excludeLockName is the bootstrap lock's directory, beside info/ in
	// the git directory that holds ExcludePath (the common one for linked
	// worktrees, so every worktree of a repository serialises on it).
	excludeLockName = "cursorkit-exclude.lock"
)

// exclusionPatterns returns the lines that keep cursorkit's files out of
// git status: the config, the state file, the lock directory, each
// anchored at the work tree's root.
func exclusionPatterns() []string {
	return []string{"/.cursor/mcp.json", "/.cursor/.cursorkit-mcp-state.json", "/.cursor/.cursorkit-mcp.lock/",
		// The temporary files of an atomic write (internal/safefile) that a
		// kill left behind, until the next locked step sweeps them.
		"/.cursor/.mcp.json.*.tmp", "/.cursor/..cursorkit-mcp-state.json.*.tmp"}
}

// excludeLockDir is the bootstrap lock directory of shape's exclude file.
func excludeLockDir(shape gitShape) string {
	return filepath.Join(filepath.Dir(filepath.Dir(shape.ExcludePath)), excludeLockName)
}

// addExclusion ensures the block is in shape's exclude file and lists
// shape.Root: appended at the end of the file when there is none (after a
// line break when the file does not end with one; info/ and the file
// created, 0755 and 0644, when missing). The read-modify-write runs under
// the bootstrap lock, and the file is replaced atomically keeping its mode.
// Nothing is written when the file already says it all. No-op for gitNone.
func addExclusion(ctx context.Context, shape gitShape) error {
	if shape.Kind == gitNone {
		return nil
	}
	return editExclusion(ctx, shape, func(b *excludeBlock) (keep, write bool) {
		if !b.has(shape.Root) {
			b.roots = append(b.roots, shape.Root)
		}
		return true, true
	})
}

// removeExclusion drops shape.Root's line from the block, and the whole
// block (markers included, and the line break addExclusion added before
// it) when no worktree line remains. removed reports that the line was
// there; nothing is written when it was not. Under the bootstrap lock, as
// addExclusion. No-op for gitNone.
func removeExclusion(ctx context.Context, shape gitShape) (removed bool, err error) {
	if shape.Kind == gitNone {
		return false, nil
	}
	err = editExclusion(ctx, shape, func(b *excludeBlock) (keep, write bool) {
		before := len(b.roots)
		b.roots = slices.DeleteFunc(b.roots, func(r string) bool { return sameRoot(r, shape.Root, runtime.GOOS) })
		removed = len(b.roots) < before
		return len(b.roots) > 0, removed
	})
	return removed, err
}

// hasExclusion reports whether shape's exclude file has the block with
// shape.Root listed (a read without the lock: the file is only ever
// replaced whole). False for gitNone or a missing file.
func hasExclusion(shape gitShape) (present bool, err error) {
	if shape.Kind == gitNone {
		return false, nil
	}
	if err := checkShape(shape); err != nil {
		return false, err
	}
	data, _, err := readExclude(shape.ExcludePath)
	if err != nil {
		return false, err
	}
	b := parseExclude(data)
	return b.found && b.has(shape.Root), nil
}

// checkShape refuses a shape whose exclude path is not absolute or whose
// root cannot be one line of the file.
func checkShape(shape gitShape) error {
	if !filepath.IsAbs(shape.ExcludePath) {
		return failure.New(failure.Setup, "no absolute info/exclude path for %s", detail.Bound(shape.Root))
	}
	if shape.Root == "" || strings.ContainsAny(shape.Root, "\r\n") {
		return failure.New(failure.Setup, "the work tree's path %q cannot be written in info/exclude: it holds a line break", detail.Bound(shape.Root))
	}
	return nil
}

// editExclusion reads shape's exclude file under the bootstrap lock, lets
// edit change the block's worktree list (keep: the block stays; write:
// the change is to be written), and writes the file back when write and
// its bytes changed.
func editExclusion(ctx context.Context, shape gitShape, edit func(*excludeBlock) (keep, write bool)) (err error) {
	if err := checkShape(shape); err != nil {
		return err
	}
	infoDir := filepath.Dir(shape.ExcludePath)
	lock, err := acquireDirLock(ctx, excludeLockDir(shape), bootstrapLockPolicy(), time.Now)
	if err != nil {
		return err
	}
	defer func() {
		if rerr := lock.release(); rerr != nil && err == nil {
			err = failure.Wrap(failure.Setup, rerr, "cannot release the lock of %s", detail.Bound(shape.ExcludePath))
		}
	}()
	data, exists, err := readExclude(shape.ExcludePath)
	if err != nil {
		return err
	}
	b := parseExclude(data)
	keep, write := edit(&b)
	if !write {
		return nil
	}
	out := b.render(keep)
	if exists && bytes.Equal(out, data) || !exists && len(out) == 0 {
		return nil
	}
	if err := os.MkdirAll(infoDir, 0o755); err != nil {
		return failure.Wrap(failure.Setup, err, "cannot create %s", detail.Bound(infoDir))
	}
	if err := safefile.Write(shape.ExcludePath, out, 0o644); err != nil {
		return failure.Wrap(failure.Setup, err, "cannot write %s", detail.Bound(shape.ExcludePath))
	}
	return nil
}

// readExclude returns the exclude file's bytes; a missing file is empty
// and not existing.
func readExclude(path string) (data []byte, exists bool, err error) {
	data, err = safefile.Read(path, excludeMaxBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, failure.Wrap(failure.Setup, err, "cannot read %s", detail.Bound(path))
	}
	return data, true, nil
}

// sameRoot reports whether two worktree lines name one root: equal
// cleaned paths, case-insensitively on Windows.
func sameRoot(a, b, goos string) bool {
	a, b = filepath.Clean(a), filepath.Clean(b)
	return a == b || goos == "windows" && strings.EqualFold(a, b)
}

// excludeBlock is an exclude file split into the operator's lines and
// cursorkit's block.
//
// Parsing, conservative so that no operator line is ever lost:
//   - a block runs from a start marker to the next end marker when no other
//     start marker comes first;
//   - a start marker without its end marker (a torn or hand-edited block)
//     takes only the run of cursorkit lines right after it (patterns,
//     worktree lines, the joined line): the first other line ends it;
//   - inside a block, pattern lines, the joined line and blank lines are
//     cursorkit's and dropped (render writes them again), worktree lines
//     are collected; any other line is the operator's and kept, byte for
//     byte, just before the block;
//   - a second block is merged into the first (worktree lines in order,
//     each once) and its place keeps only its operator lines;
//   - an end marker outside any block is dropped;
//   - everything else is the operator's, kept byte for byte in its place.
type excludeBlock struct {
	kept   [][]byte // operator lines, each with its line ending as found
	at     int      // the block goes before kept[at]; len(kept) when appended
	found  bool     // the file had a block
	joined bool     // the block's first time: cursorkit ended the line above it
	roots  []string // worktree lines, in order, each once
}

// has reports whether root is one of the block's worktrees.
func (b *excludeBlock) has(root string) bool {
	return slices.ContainsFunc(b.roots, func(r string) bool { return sameRoot(r, root, runtime.GOOS) })
}

// lineContent is a line without its ending and trailing blanks (git
// ignores trailing spaces of a pattern too).
func lineContent(line []byte) string {
	return strings.TrimRight(string(line), " \t\r\n")
}

// isPattern reports whether c is one of exclusionPatterns().
func isPattern(c string) bool { return slices.Contains(exclusionPatterns(), c) }

// isOurs reports whether a line belongs to a block's body.
func isOurs(c string) bool {
	return isPattern(c) || c == excludeJoinedLine || strings.HasPrefix(c, excludeRootPrefix)
}

// splitLines splits data after each '\n'; the last line may lack one.
func splitLines(data []byte) [][]byte {
	var lines [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return append(lines, data)
		}
		lines = append(lines, data[:i+1])
		data = data[i+1:]
	}
	return lines
}

// parseExclude splits an exclude file (see excludeBlock).
func parseExclude(data []byte) excludeBlock {
	lines := splitLines(data)
	b := excludeBlock{at: -1}
	for i := 0; i < len(lines); {
		c := lineContent(lines[i])
		if c == excludeEndMarker {
			i++ // an end marker outside any block
			continue
		}
		if c != excludeStartMarker {
			b.kept = append(b.kept, lines[i])
			i++
			continue
		}
		end := -1
		for j := i + 1; j < len(lines); j++ {
			if cj := lineContent(lines[j]); cj == excludeEndMarker {
				end = j
				break
			} else if cj == excludeStartMarker {
				break
			}
		}
		stop := end
		if end < 0 {
			stop = i + 1
			for stop < len(lines) && isOurs(lineContent(lines[stop])) {
				stop++
			}
		}
		first := !b.found
		for _, line := range lines[i+1 : stop] {
			switch c := lineContent(line); {
			case strings.HasPrefix(c, excludeRootPrefix):
				root := strings.TrimRight(string(line), "\r\n")[len(excludeRootPrefix):]
				if root != "" && !b.has(root) {
					b.roots = append(b.roots, root)
				}
			case c == excludeJoinedLine:
				b.joined = b.joined || first
			case c == "" || isPattern(c):
			default:
				b.kept = append(b.kept, line)
			}
		}
		if first {
			b.found, b.at = true, len(b.kept)
		}
		i = stop
		if end >= 0 {
			i = end + 1
		}
	}
	if b.at < 0 {
		b.at = len(b.kept)
	}
	return b
}

// render returns the file: the operator's lines with the block in its
// place when keep (else without it, giving back the line break it added).
func (b *excludeBlock) render(keep bool) []byte {
	var out bytes.Buffer
	for _, l := range b.kept[:b.at] {
		out.Write(l)
	}
	rest := b.kept[b.at:]
	if keep {
		joined := b.found && b.joined
		if out.Len() > 0 && out.Bytes()[out.Len()-1] != '\n' {
			out.WriteByte('\n') // only when the block is appended after an unended last line
			joined = true
		}
		out.WriteString(excludeStartMarker + "\n")
		if joined {
			out.WriteString(excludeJoinedLine + "\n")
		}
		for _, p := range exclusionPatterns() {
			out.WriteString(p + "\n")
		}
		for _, r := range b.roots {
			out.WriteString(excludeRootPrefix + r + "\n")
		}
		out.WriteString(excludeEndMarker + "\n")
	} else if b.found && b.joined && len(rest) == 0 && out.Len() > 0 && out.Bytes()[out.Len()-1] == '\n' {
		out.Truncate(out.Len() - 1)
	}
	for _, l := range rest {
		out.Write(l)
	}
	return out.Bytes()
}
