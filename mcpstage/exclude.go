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

// The exclusion block in info/exclude, one per file, shared by the linked
// worktrees of a repository:
//
//	# >>> cursorkit >>>
//	/.cursor/mcp.json
//	/.cursor/.cursorkit-mcp-state.json
//	/.cursor/.cursorkit-mcp.lock/
//	# worktree: /abs/root/of/a/worktree
//	# made .cursor/: /abs/root/of/a/worktree
//	# <<< cursorkit <<<
//
// A "made" line records that cursorkit made that worktree's .cursor/: it
// is written before the mkdir and goes once the directory is gone, so a
// crash or a failed rmdir anywhere between leaves it for the next cleanup
// (the manifest inside .cursor/ cannot say so once it is gone).
//
// When addExclusion had to end the file's last line to append the block,
// excludeJoinedLine follows the start marker, so that the last removal
// gives that byte back too: add then remove leaves the file as it was.
const (
	excludeStartMarker = "# >>> cursorkit >>>"
	excludeEndMarker   = "# <<< cursorkit <<<"
	excludeRootPrefix  = "# worktree: "
	excludeMadePrefix  = "# made .cursor/: "
	excludeJoinedLine  = "# (cursorkit ended the line above this block)"
	excludeMaxBytes    = 4 << 20 // bounds the exclude file read
	// excludeLockName is the bootstrap lock's directory, beside info/ in
	// the git directory that holds ExcludePath (the common one for linked
	// worktrees, so every worktree of a repository serialises on it).
	excludeLockName = "cursorkit-exclude.lock"
)

// exclusionPatterns returns the lines that keep cursorkit's files out of
// git status, anchored at the work tree's root: the config, the state
// file, the lock directory, and the temporary files of an atomic write
// (internal/safefile) that a kill left, until a locked step sweeps them.
func exclusionPatterns() []string {
	return []string{"/.cursor/mcp.json", "/.cursor/.cursorkit-mcp-state.json", "/.cursor/.cursorkit-mcp.lock/",
		"/.cursor/.mcp.json.*.tmp", "/.cursor/..cursorkit-mcp-state.json.*.tmp"}
}

// excludeLockDir is the bootstrap lock directory of shape's exclude file.
func excludeLockDir(shape gitShape) string {
	return filepath.Join(filepath.Dir(filepath.Dir(shape.ExcludePath)), excludeLockName)
}

// addExclusion ensures the block is in shape's exclude file and lists
// shape.Root: appended at the end when there is none (after a line break
// when the file does not end with one; info/ and the file created, 0755
// and 0644, when missing).
func addExclusion(ctx context.Context, shape gitShape) error {
	return editExclusion(ctx, shape, func(b *excludeBlock) (keep, write bool) {
		b.roots = addRoot(b.roots, shape.Root)
		return true, true
	})
}

// ensureExclusion is addExclusion unless the block lists shape.Root
// already (read without the bootstrap lock: peers staging in a worktree
// at once do not queue on it for a line that is there).
func ensureExclusion(ctx context.Context, shape gitShape) error {
	excluded, err := hasExclusion(shape)
	if err == nil && !excluded {
		err = addExclusion(ctx, shape)
	}
	return err
}

// removeExclusion drops shape.Root's worktree line from the block, and
// the whole block (with the line break addExclusion added before it) when
// no worktree or "made" line remains. removed reports that the line was
// there.
func removeExclusion(ctx context.Context, shape gitShape) (removed bool, err error) {
	err = editExclusion(ctx, shape, func(b *excludeBlock) (keep, write bool) {
		b.roots, removed = removeRoot(b.roots, shape.Root)
		return b.inUse(), removed
	})
	return removed, err
}

// hasExclusion reports whether shape's exclude file lists shape.Root in
// the block (read without the lock: the file is only ever replaced whole).
func hasExclusion(shape gitShape) (present bool, err error) {
	b, err := readBlock(shape)
	return b.has(shape.Root), err
}

// hasMadeMark reports whether the block records that cursorkit made
// shape.Root's .cursor/ (read without the lock, as hasExclusion).
func hasMadeMark(shape gitShape) (marked bool, err error) {
	b, err := readBlock(shape)
	return b.madeHere(shape.Root), err
}

// readBlock reads shape's exclude file without the lock: an empty block
// for gitNone.
func readBlock(shape gitShape) (excludeBlock, error) {
	if shape.Kind == gitNone {
		return excludeBlock{}, nil
	}
	if err := checkShape(shape); err != nil {
		return excludeBlock{}, err
	}
	data, err := readExclude(shape.ExcludePath)
	if err != nil {
		return excludeBlock{}, err
	}
	return parseExclude(data), nil
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
// edit change the block's worktree lists (keep: the block stays; write:
// the change is to be written), and replaces the file atomically, keeping
// its mode, when write and its bytes changed. No-op for gitNone.
func editExclusion(ctx context.Context, shape gitShape, edit func(*excludeBlock) (keep, write bool)) error {
	return withExcludeLock(ctx, shape, func(x lockedExclude) error { return x.edit(edit) })
}

// lockedExclude is an exclude file whose bootstrap lock is held.
type lockedExclude struct{ shape gitShape }

// withExcludeLock runs fn with shape's bootstrap lock held. No-op for
// gitNone.
func withExcludeLock(ctx context.Context, shape gitShape, fn func(lockedExclude) error) (err error) {
	if shape.Kind == gitNone {
		return nil
	}
	if err := checkShape(shape); err != nil {
		return err
	}
	lock, err := acquireDirLock(ctx, excludeLockDir(shape), bootstrapLockPolicy(), time.Now)
	if err != nil {
		return err
	}
	defer func() {
		if rerr := lock.release(); rerr != nil && err == nil {
			err = failure.Wrap(failure.Setup, rerr, "cannot release the lock of %s", detail.Bound(shape.ExcludePath))
		}
	}()
	return fn(lockedExclude{shape})
}

// edit is editExclusion's step, under the lock.
func (x lockedExclude) edit(edit func(*excludeBlock) (keep, write bool)) error {
	data, err := readExclude(x.shape.ExcludePath)
	if err != nil {
		return err
	}
	b := parseExclude(data)
	keep, write := edit(&b)
	if !write {
		return nil
	}
	out := b.render(keep)
	if bytes.Equal(out, data) { // a missing file (nil) stays missing when empty
		return nil
	}
	infoDir := filepath.Dir(x.shape.ExcludePath)
	if err := os.MkdirAll(infoDir, 0o755); err != nil {
		return failure.Wrap(failure.Setup, err, "cannot create %s", detail.Bound(infoDir))
	}
	return failure.Wrap(failure.Setup, safefile.Write(x.shape.ExcludePath, out, 0o644), "cannot write %s", detail.Bound(x.shape.ExcludePath))
}

// markMade is the edit that adds root's worktree and "made" lines.
func markMade(root string) func(*excludeBlock) (bool, bool) {
	return func(b *excludeBlock) (bool, bool) {
		b.roots, b.made = addRoot(b.roots, root), addRoot(b.made, root)
		return true, true
	}
}

// unmarkMade is the edit that removes root's "made" line.
func unmarkMade(root string) func(*excludeBlock) (bool, bool) {
	return func(b *excludeBlock) (bool, bool) {
		var dropped bool
		b.made, dropped = removeRoot(b.made, root)
		return b.inUse(), dropped
	}
}

// unmarkUnlessStaging drops shape.Root's "made" line unless dir, its
// .cursor/, is there and still holds only staging (staging says so),
// looked at under the bootstrap lock: a peer makes it again only under
// that lock, and then the line is its own. dropped reports that the line
// went.
func unmarkUnlessStaging(ctx context.Context, shape gitShape, dir string, staging func() bool) (dropped bool, err error) {
	err = withExcludeLock(ctx, shape, func(x lockedExclude) error {
		if _, err := os.Lstat(dir); err == nil && staging() {
			return nil
		}
		return x.edit(func(b *excludeBlock) (bool, bool) {
			var inUse bool
			inUse, dropped = unmarkMade(shape.Root)(b)
			return inUse, dropped
		})
	})
	return dropped, err
}

// readExclude returns the exclude file's bytes, nil when it is missing.
func readExclude(path string) ([]byte, error) {
	data, err := safefile.Read(path, excludeMaxBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, failure.Wrap(failure.Setup, err, "cannot read %s", detail.Bound(path))
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
//     cursorkit's and dropped (render writes them again), worktree and
//     "made" lines are collected; any other line is the operator's and
//     kept, byte for byte, just before the block;
//   - a second block is merged into the first (worktree and "made" lines
//     in order, each once) and its place keeps only its operator lines;
//   - an end marker outside any block is dropped;
//   - everything else is the operator's, kept byte for byte in its place.
type excludeBlock struct {
	kept   [][]byte // operator lines, each with its line ending as found
	at     int      // the block goes before kept[at]; len(kept) when appended
	found  bool     // the file had a block
	joined bool     // the block's first time: cursorkit ended the line above it
	roots  []string // worktree lines, in order, each once
	made   []string // worktrees whose .cursor/ cursorkit made ("made" lines)
}

// has reports whether root is one of the block's worktrees.
func (b *excludeBlock) has(root string) bool { return hasRoot(b.roots, root) }

// madeHere reports whether the block records that cursorkit made root's
// .cursor/.
func (b *excludeBlock) madeHere(root string) bool { return hasRoot(b.made, root) }

// inUse reports whether the block has a line left to keep it.
func (b *excludeBlock) inUse() bool { return len(b.roots) > 0 || len(b.made) > 0 }

func hasRoot(roots []string, root string) bool { return slices.ContainsFunc(roots, isRoot(root)) }

// isRoot is the test a line's root passes when it names root (sameRoot).
func isRoot(root string) func(string) bool {
	return func(r string) bool { return sameRoot(r, root, runtime.GOOS) }
}

// addRoot returns roots with root appended unless it is there.
func addRoot(roots []string, root string) []string {
	if hasRoot(roots, root) {
		return roots
	}
	return append(roots, root)
}

// addRootOf returns roots with the root a line names after prefix (its
// line ending aside) appended, unless it is empty or there.
func addRootOf(roots []string, line []byte, prefix string) []string {
	if root := strings.TrimRight(string(line), "\r\n")[len(prefix):]; root != "" {
		return addRoot(roots, root)
	}
	return roots
}

// removeRoot returns roots without root, and whether it was there.
func removeRoot(roots []string, root string) ([]string, bool) {
	before := len(roots)
	roots = slices.DeleteFunc(roots, isRoot(root))
	return roots, len(roots) < before
}

// lineContent is a line without its ending and trailing blanks (as git
// reads a pattern).
func lineContent(line []byte) string {
	return strings.TrimRight(string(line), " \t\r\n")
}

// isOurs reports whether a line belongs to a block's body.
func isOurs(c string) bool {
	return slices.Contains(exclusionPatterns(), c) || c == excludeJoinedLine ||
		strings.HasPrefix(c, excludeRootPrefix) || strings.HasPrefix(c, excludeMadePrefix)
}

// parseExclude splits an exclude file (see excludeBlock).
func parseExclude(data []byte) excludeBlock {
	// Each line with its '\n' (the last may lack one), none after a final one.
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	b := excludeBlock{at: -1}
	for i := 0; i < len(lines); {
		if c := lineContent(lines[i]); c != excludeStartMarker {
			if c != excludeEndMarker { // an end marker outside any block goes
				b.kept = append(b.kept, lines[i])
			}
			i++
			continue
		}
		// The block's body is lines[i+1:stop]; the next line to read is next.
		stop := i + 1
		for stop < len(lines) && lineContent(lines[stop]) != excludeEndMarker && lineContent(lines[stop]) != excludeStartMarker {
			stop++
		}
		next := stop + 1
		if stop == len(lines) || lineContent(lines[stop]) != excludeEndMarker {
			// No end marker: only the run of cursorkit lines after the start.
			stop = i + 1
			for stop < len(lines) && isOurs(lineContent(lines[stop])) {
				stop++
			}
			next = stop
		}
		first := !b.found
		for _, line := range lines[i+1 : stop] {
			switch c := lineContent(line); {
			case strings.HasPrefix(c, excludeRootPrefix):
				b.roots = addRootOf(b.roots, line, excludeRootPrefix)
			case strings.HasPrefix(c, excludeMadePrefix):
				b.made = addRootOf(b.made, line, excludeMadePrefix)
			case c == excludeJoinedLine:
				b.joined = b.joined || first
			case c == "" || slices.Contains(exclusionPatterns(), c):
			default:
				b.kept = append(b.kept, line)
			}
		}
		if first {
			b.found, b.at = true, len(b.kept)
		}
		i = next
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
		for _, r := range b.made {
			out.WriteString(excludeMadePrefix + r + "\n")
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
