package review

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
)

// Scope says which change a review covers (docs/contract.md, "Review").
type Scope string

// The scopes.
const (
	// ScopeAuto is the working tree when it is dirty, else the branch.
	ScopeAuto Scope = "auto"
	// ScopeWorkingTree is every uncommitted change against HEAD: staged,
	// unstaged and untracked files (ignored files excluded).
	ScopeWorkingTree Scope = "working-tree"
	// ScopeBranch is the range from the merge base of the base and HEAD
	// to HEAD.
	ScopeBranch Scope = "branch"
)

// ParseScope returns the Scope named s ("" is ScopeAuto); an unknown one
// is failure.Input.
func ParseScope(s string) (Scope, error) {
	switch sc := Scope(strings.TrimSpace(s)); sc {
	case "":
		return ScopeAuto, nil
	case ScopeAuto, ScopeWorkingTree, ScopeBranch:
		return sc, nil
	}
	return "", failure.New(failure.Input, "unknown review scope %q: want auto, working-tree or branch", detail.Cut(detail.Bound(s), 40))
}

// Where a branch review's base came from.
const (
	BaseFromFlag     = "flag"        // given by the caller (--base)
	BaseFromUpstream = "upstream"    // the current branch's upstream (@{upstream})
	BaseFromOrigin   = "origin/HEAD" // the remote origin's default branch
	BaseFromMain     = "main"        // a local or remote-tracking main
	BaseFromMaster   = "master"      // a local or remote-tracking master
)

// Bounds of collection (docs/contract.md, "Review"): how much diff text
// Collect keeps (the rest only counted in Diff.Size), and how many
// untracked files get their content diffed (the rest only named in
// Diff.Files). Diff.Truncated says either was reached.
const (
	maxCollectBytes   = 8 << 20
	maxUntrackedDiffs = 200
)

// Diff is the change under review.
type Diff struct {
	// Scope is the scope used: ScopeWorkingTree or ScopeBranch, never
	// ScopeAuto. Requested is what the caller asked for.
	Scope     Scope `json:"scope"`
	Requested Scope `json:"requested"`
	// Root is the repository's top-level directory; every path is
	// relative to it.
	Root string `json:"root"`
	// Base is what the change is compared with: for a branch, the base
	// ref as given or chosen ("origin/main"); for the working tree,
	// "HEAD", or "" when HEAD has no commit yet (then every file is new).
	Base string `json:"base"`
	// BaseSource says where a branch's base came from (BaseFrom*);
	// empty for the working tree.
	BaseSource string `json:"baseSource,omitempty"`
	// MergeBase is the commit a branch range starts at; Head is HEAD's
	// commit ("" when there is none).
	MergeBase string `json:"mergeBase,omitempty"`
	Head      string `json:"head,omitempty"`
	// Files are the changed paths, sorted, each once; Untracked are those
	// of them that git does not track yet (working tree only).
	Files     []string `json:"files"`
	Untracked []string `json:"untracked,omitempty"`
	// Text is the unified diff (git's format, a/ and b/ prefixes;
	// binary files named, not shown). Size counts every byte git printed
	// for it; Truncated reports that Text holds less than the whole change
	// (maxCollectBytes, maxUntrackedDiffs).
	Text      string `json:"-"`
	Size      int64  `json:"size"`
	Truncated bool   `json:"truncated,omitzero"`
}

// Collect collects the change in the git repository holding dir
// (docs/contract.md, "Review"). base is a branch review's base ref; empty
// picks the current branch's upstream, else origin/HEAD, else main, else
// master. Errors: failure.Input for a directory outside a git work tree,
// a bad scope or base, a HEAD without commits for a branch review, and an
// empty change ("nothing to review: ..."); failure.Setup when git is not
// on PATH; failure.Cancelled or failure.Timeout when ctx or a command's
// bound ends first; failure.Process for another git failure. Messages
// name the problem, never the diff or the environment.
func Collect(ctx context.Context, dir string, scope Scope, base string) (Diff, error) {
	return collectWith(ctx, nil, runtime.GOOS, dir, scope, base)
}

// collectWith is Collect with the environment git runs in (nil: this
// process's) and the OS whose rules resolve it.
func collectWith(ctx context.Context, env []string, goos, dir string, scope Scope, base string) (Diff, error) {
	if err := ctx.Err(); err != nil {
		return Diff{}, failure.Wrap(failure.Cancelled, err, "review cancelled")
	}
	scope, err := ParseScope(string(scope))
	if err != nil {
		return Diff{}, err
	}
	base = strings.TrimSpace(base)
	if strings.HasPrefix(base, "-") || strings.ContainsFunc(base, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return Diff{}, failure.New(failure.Input, "bad base ref %q: a ref does not start with '-' or hold control characters", detail.Cut(detail.Bound(base), 80))
	}
	g, err := newGit(ctx, env, goos)
	if err != nil {
		return Diff{}, err
	}
	g.dir = dir
	root, err := g.toplevel(ctx, dir)
	if err != nil {
		return Diff{}, err
	}
	g.dir = root
	d := Diff{Requested: scope, Root: root, Files: []string{}}
	if d.Head, err = g.head(ctx); err != nil {
		return Diff{}, err
	}
	if scope == ScopeAuto {
		dirty, err := g.dirty(ctx)
		if err != nil {
			return Diff{}, err
		}
		scope = ScopeBranch
		if dirty {
			scope = ScopeWorkingTree
		}
	}
	d.Scope = scope
	if scope == ScopeWorkingTree {
		err = g.workingTree(ctx, &d)
	} else {
		err = g.branch(ctx, &d, base)
	}
	if err != nil {
		return Diff{}, err
	}
	if d.Size == 0 && len(d.Files) == 0 {
		return Diff{}, failure.New(failure.Input, "%s", nothingMessage(d))
	}
	return d, nil
}

// nothingMessage explains an empty change.
func nothingMessage(d Diff) string {
	switch {
	case d.Scope == ScopeWorkingTree:
		return "nothing to review: the working tree is clean (no staged, unstaged or untracked changes)"
	case d.Requested == ScopeAuto:
		return "nothing to review: the working tree is clean and HEAD has no commits beyond " + d.Base + " (" + d.BaseSource + ")"
	}
	return "nothing to review: HEAD has no commits beyond " + d.Base + " (" + d.BaseSource + ")"
}

// toplevel returns the work tree's root, or failure.Input when dir is not
// inside one.
func (g *git) toplevel(ctx context.Context, dir string) (string, error) {
	r, err := g.short(ctx, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", err
	}
	root := strings.TrimRight(string(r.Out), "\r\n")
	if r.ExitCode != 0 || root == "" {
		return "", failure.New(failure.Input, "not a git work tree: %s", detail.Bound(dir)).WithDetail(r.Why())
	}
	return root, nil
}

// head returns HEAD's commit id, "" when the branch has no commit yet.
func (g *git) head(ctx context.Context) (string, error) {
	r, err := g.short(ctx, "rev-parse", "--verify", "-q", "HEAD")
	if err != nil {
		return "", err
	}
	switch r.ExitCode {
	case 0:
		return strings.TrimSpace(string(r.Out)), nil
	case 1:
		return "", nil
	}
	return "", failed(r, "rev-parse HEAD")
}

// dirty reports whether the working tree has a staged, unstaged or
// untracked (not ignored) change.
func (g *git) dirty(ctx context.Context) (bool, error) {
	r, err := g.short(ctx, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=none")
	if err != nil {
		return false, err
	}
	if r.ExitCode != 0 {
		return false, failed(r, "status")
	}
	return len(r.Out) > 0 || r.Truncated, nil
}

// diffFlags are every diff's flags: git's own format whatever the
// configuration, renames found.
func diffFlags() []string {
	return []string{"--no-ext-diff", "--no-textconv", "--no-color", "--src-prefix=a/", "--dst-prefix=b/", "--find-renames"}
}

// workingTree collects staged, unstaged and untracked changes.
func (g *git) workingTree(ctx context.Context, d *Diff) error {
	from := "HEAD"
	if d.Head == "" {
		// No commit yet: everything staged is new, compared with the empty tree.
		r, err := g.short(ctx, "hash-object", "-t", "tree", "--stdin")
		if err != nil {
			return err
		}
		if r.ExitCode != 0 {
			return failed(r, "hash-object")
		}
		from = strings.TrimSpace(string(r.Out))
	} else {
		d.Base = "HEAD"
	}
	text := &bytes.Buffer{}
	files, err := g.diff(ctx, d, text, from)
	if err != nil {
		return err
	}
	r, err := g.run(ctx, maxCollectBytes, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return err
	}
	if r.ExitCode != 0 || r.Truncated {
		return failed(r, "ls-files")
	}
	untracked := splitZ(r.Out)
	for i, path := range untracked {
		if i >= maxUntrackedDiffs || text.Len() >= maxCollectBytes {
			d.Truncated = true
			break
		}
		// Only a regular file or a link has content git can show: a FIFO
		// would block git (or fail the whole review), a socket or device
		// has none. Such a file is named, never read.
		if info, err := os.Lstat(filepath.Join(d.Root, filepath.FromSlash(path))); err == nil && !info.Mode().IsRegular() && info.Mode()&fs.ModeSymlink == 0 {
			fmt.Fprintf(text, "[not shown: %s is not a regular file]\n", path)
			continue
		}
		args := append(append([]string{"diff", "--no-index"}, diffFlags()...), "--", "/dev/null", path)
		if err := g.diffInto(ctx, d, text, args...); err != nil {
			return err
		}
	}
	d.Untracked = untracked
	d.Files = sortedUnique(append(files, untracked...))
	d.Text = text.String()
	return nil
}

// diffInto runs one diff command, appending its output to text within
// maxCollectBytes and counting its size into d. Exit 1 is "differences
// found" (diff --no-index).
func (g *git) diffInto(ctx context.Context, d *Diff, text *bytes.Buffer, args ...string) error {
	r, err := g.run(ctx, max(maxCollectBytes-text.Len(), 0), args...)
	if err != nil {
		return err
	}
	if r.ExitCode != 0 && (r.ExitCode != 1 || !slices.Contains(args, "--no-index")) {
		return failed(r, args[0])
	}
	text.Write(r.Out)
	d.Size += r.Size
	d.Truncated = d.Truncated || r.Truncated
	return nil
}

// diff appends the diff between revs (git diff's) to text and returns the
// paths it touches.
func (g *git) diff(ctx context.Context, d *Diff, text *bytes.Buffer, revs ...string) ([]string, error) {
	r, err := g.run(ctx, maxCollectBytes, append(append([]string{"diff", "--name-only", "-z", "--no-ext-diff", "--find-renames"}, revs...), "--")...)
	if err != nil {
		return nil, err
	}
	if r.ExitCode != 0 || r.Truncated {
		return nil, failed(r, "diff --name-only")
	}
	return splitZ(r.Out), g.diffInto(ctx, d, text, append(append(append([]string{"diff"}, diffFlags()...), revs...), "--")...)
}

// branch collects the range from the merge base of base and HEAD to HEAD.
func (g *git) branch(ctx context.Context, d *Diff, base string) error {
	if d.Head == "" {
		return failure.New(failure.Input, "nothing to review: HEAD has no commits yet, so there is no branch to compare, and the working tree is clean")
	}
	if base != "" {
		ok, err := g.exists(ctx, base)
		if err != nil {
			return err
		}
		if !ok {
			return failure.New(failure.Input, "base %q is not a commit in this repository", detail.Cut(base, 120))
		}
		d.Base, d.BaseSource = base, BaseFromFlag
	} else if err := g.defaultBase(ctx, d); err != nil {
		return err
	}
	r, err := g.short(ctx, "merge-base", "--end-of-options", d.Base, "HEAD")
	if err != nil {
		return err
	}
	switch r.ExitCode {
	case 0:
		d.MergeBase = strings.TrimSpace(string(r.Out))
	case 1:
		return failure.New(failure.Input, "base %q and HEAD have no common ancestor", detail.Cut(d.Base, 120))
	default:
		return failure.New(failure.Input, "base %q is not a commit in this repository", detail.Cut(d.Base, 120)).WithDetail(r.Why())
	}
	text := &bytes.Buffer{}
	files, err := g.diff(ctx, d, text, d.MergeBase, "HEAD")
	if err != nil {
		return err
	}
	d.Files = sortedUnique(files)
	d.Text = text.String()
	return nil
}

// exists reports whether ref names an object; merge-base then refuses one
// that is not a commit. (No "^{commit}": a git.cmd shim refuses '^'.)
func (g *git) exists(ctx context.Context, ref string) (bool, error) {
	r, err := g.short(ctx, "rev-parse", "--verify", "-q", "--end-of-options", ref)
	if err != nil {
		return false, err
	}
	return r.ExitCode == 0, nil
}

// defaultBase picks a branch review's base when none is given: the
// current branch's upstream, else origin/HEAD's branch, else main, else
// master (local branch first, then origin's).
func (g *git) defaultBase(ctx context.Context, d *Diff) error {
	r, err := g.short(ctx, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
	if err != nil {
		return err
	}
	if up := strings.TrimSpace(string(r.Out)); r.ExitCode == 0 && up != "" {
		d.Base, d.BaseSource = up, BaseFromUpstream
		return nil
	}
	r, err = g.short(ctx, "symbolic-ref", "-q", "--short", "refs/remotes/origin/HEAD")
	if err != nil {
		return err
	}
	if ref := strings.TrimSpace(string(r.Out)); r.ExitCode == 0 && ref != "" {
		if ok, err := g.exists(ctx, ref); err != nil {
			return err
		} else if ok {
			d.Base, d.BaseSource = ref, BaseFromOrigin
			return nil
		}
	}
	for _, name := range []string{BaseFromMain, BaseFromMaster} {
		for _, ref := range []string{name, "origin/" + name} {
			ok, err := g.exists(ctx, ref)
			if err != nil {
				return err
			}
			if ok {
				d.Base, d.BaseSource = ref, name
				return nil
			}
		}
	}
	return failure.New(failure.Input, "no base to compare the branch with: the branch has no upstream, and there is no origin/HEAD, main or master; pass --base REF")
}

// splitZ splits NUL-terminated names.
func splitZ(b []byte) []string {
	var out []string
	for _, f := range bytes.Split(b, []byte{0}) {
		if len(f) > 0 {
			out = append(out, string(f))
		}
	}
	return out
}

func sortedUnique(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	s = slices.Compact(s)
	if s == nil {
		s = []string{}
	}
	return s
}
