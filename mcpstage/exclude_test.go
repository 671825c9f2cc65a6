package mcpstage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// fakeShape is a shape whose git directory is gitDir (no git needed: the
// block is the file's business only).
// newGitDir makes an empty git directory for fakeShape.
func newGitDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(testkit.TempDir(t), ".git")
	require.NoError(t, os.Mkdir(dir, 0o755))
	return dir
}

func fakeShape(gitDir, root string) gitShape {
	return gitShape{Kind: gitRepo, Root: root, ExcludePath: filepath.Join(gitDir, "info", "exclude")}
}

// block is the block listing roots, as addExclusion writes it.
func block(joined bool, roots ...string) string {
	var b strings.Builder
	b.WriteString("# >>> cursorkit >>>\n")
	if joined {
		b.WriteString("# (cursorkit ended the line above this block)\n")
	}
	b.WriteString("/.cursor/mcp.json\n/.cursor/.cursorkit-mcp-state.json\n/.cursor/.cursorkit-mcp.lock/\n/.cursor/.mcp.json.*.tmp\n/.cursor/..cursorkit-mcp-state.json.*.tmp\n")
	for _, r := range roots {
		b.WriteString("# worktree: " + r + "\n")
	}
	b.WriteString("# <<< cursorkit <<<\n")
	return b.String()
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

func TestExclusionRoundTrip(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		initial *string // nil: no file
		added   string  // the file after addExclusion
		removed string  // the file after the last removeExclusion
	}{
		{"no file", nil, block(false, "R"), ""},
		{"an empty file", ptr(""), block(false, "R"), ""},
		{"operator lines", ptr("# git ls-files --others --exclude-from=.git/info/exclude\n*.log\n"),
			"# git ls-files --others --exclude-from=.git/info/exclude\n*.log\n" + block(false, "R"),
			"# git ls-files --others --exclude-from=.git/info/exclude\n*.log\n"},
		{"no final newline", ptr("*.log\nbuild/"), "*.log\nbuild/\n" + block(true, "R"), "*.log\nbuild/"},
		{"CRLF lines and blanks", ptr("*.log\r\n\r\n  spaced  \r\n"), "*.log\r\n\r\n  spaced  \r\n" + block(false, "R"), "*.log\r\n\r\n  spaced  \r\n"},
		{"a lone line without newline", ptr("x"), "x\n" + block(true, "R"), "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gitDir := newGitDir(t)
			root := filepath.Join(filepath.Dir(gitDir), "R")
			shape := fakeShape(gitDir, root)
			want := func(s string) string { return strings.ReplaceAll(s, "# worktree: R\n", "# worktree: "+root+"\n") }
			if tt.initial != nil {
				require.NoError(t, os.MkdirAll(filepath.Dir(shape.ExcludePath), 0o755))
				require.NoError(t, os.WriteFile(shape.ExcludePath, []byte(*tt.initial), 0o644))
			}
			has, err := hasExclusion(shape)
			require.NoError(t, err)
			assert.False(t, has)

			require.NoError(t, addExclusion(ctx, shape))
			assert.Equal(t, want(tt.added), readFile(t, shape.ExcludePath))
			has, err = hasExclusion(shape)
			require.NoError(t, err)
			assert.True(t, has)
			require.NoError(t, addExclusion(ctx, shape), "a second add")
			assert.Equal(t, want(tt.added), readFile(t, shape.ExcludePath), "changes nothing")
			assert.NoDirExists(t, excludeLockDir(shape), "the lock is released")

			removed, err := removeExclusion(ctx, shape)
			require.NoError(t, err)
			assert.True(t, removed)
			assert.Equal(t, tt.removed, readFile(t, shape.ExcludePath), "byte for byte")
			removed, err = removeExclusion(ctx, shape)
			require.NoError(t, err)
			assert.False(t, removed)
			assert.Equal(t, tt.removed, readFile(t, shape.ExcludePath))
			has, err = hasExclusion(shape)
			require.NoError(t, err)
			assert.False(t, has)
			assert.NoDirExists(t, excludeLockDir(shape))
		})
	}
}

func TestExclusionKeepsTheFileMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no permission bits to keep")
	}
	gitDir := newGitDir(t)
	shape := fakeShape(gitDir, filepath.Join(gitDir, "R"))
	require.NoError(t, addExclusion(context.Background(), shape))
	info, err := os.Stat(shape.ExcludePath)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), info.Mode().Perm(), "a new file is 0644 as git makes it")

	require.NoError(t, os.Chmod(shape.ExcludePath, 0o600))
	_, err = removeExclusion(context.Background(), shape)
	require.NoError(t, err)
	info, err = os.Stat(shape.ExcludePath)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
}

func TestExclusionNoGitIsANoOp(t *testing.T) {
	shape := gitShape{Kind: gitNone, Root: testkit.TempDir(t)}
	require.NoError(t, addExclusion(context.Background(), shape))
	removed, err := removeExclusion(context.Background(), shape)
	require.NoError(t, err)
	assert.False(t, removed)
	has, err := hasExclusion(shape)
	require.NoError(t, err)
	assert.False(t, has)
	entries, err := os.ReadDir(shape.Root)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestExclusionRefusals(t *testing.T) {
	gitDir := newGitDir(t)
	for _, shape := range []gitShape{
		fakeShape(gitDir, "/a\n/.cursor/\n"),
		{Kind: gitRepo, Root: gitDir, ExcludePath: "relative/exclude"},
	} {
		assert.Equal(t, failure.Setup, failure.KindOf(addExclusion(context.Background(), shape)), "%q", shape)
		_, err := hasExclusion(shape)
		assert.Equal(t, failure.Setup, failure.KindOf(err))
	}
	assert.NoFileExists(t, filepath.Join(gitDir, "info", "exclude"))

	// A held bootstrap lock (a fresh directory without an owner file, as
	// its maker is about to write one): the edit waits for it, here until
	// its context ends, and leaves the file untouched.
	shape := fakeShape(gitDir, filepath.Join(gitDir, "R"))
	require.NoError(t, os.MkdirAll(excludeLockDir(shape), 0o700))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := addExclusion(ctx, shape)
	assert.Equal(t, failure.Cancelled, failure.KindOf(err), "%v", err)
	assert.NoFileExists(t, shape.ExcludePath)
}

// TestMalformedBlocks: a torn or hand-edited block never costs an operator
// line.
func TestMalformedBlocks(t *testing.T) {
	const (
		start = "# >>> cursorkit >>>\n"
		end   = "# <<< cursorkit <<<\n"
		pats  = "/.cursor/mcp.json\n/.cursor/.cursorkit-mcp-state.json\n/.cursor/.cursorkit-mcp.lock/\n/.cursor/.mcp.json.*.tmp\n/.cursor/..cursorkit-mcp-state.json.*.tmp\n"
	)
	tests := []struct {
		name       string
		initial    string
		root       string
		add        bool
		want       string
		wantRemove bool
	}{
		// Roots without separators keep the cases the same on every OS.
		{"a start without its end: the run of cursorkit lines is the block",
			"a\n" + start + pats + "# worktree: R1\nop1\n/.cursor/mcp.json\nop2",
			"R2", true,
			"a\n" + block(false, "R1", "R2") + "op1\n/.cursor/mcp.json\nop2", false},
		{"a start without its end, removing the last worktree",
			"a\n" + start + "/.cursor/mcp.json\n# worktree: R1\nop1\n",
			"R1", false,
			"a\nop1\n", true},
		{"a start without its end at the end of the file",
			"a\n" + start + "/.cursor/mcp.json",
			"R1", true,
			"a\n" + block(false, "R1"), false},
		{"two blocks merge into the first",
			"a\n" + start + pats + "# worktree: R1\n" + end + "b\n" + start + pats + "# worktree: R2\n# worktree: R1\n" + end + "c\n",
			"R3", true,
			"a\n" + block(false, "R1", "R2", "R3") + "b\nc\n", false},
		{"two blocks, removing one of their worktrees",
			"a\n" + start + "# worktree: R1\n" + end + "b\n" + start + "# worktree: R2\n" + end,
			"R1", false,
			"a\n" + block(false, "R2") + "b\n", true},
		{"operator lines inside a block stay, before it",
			start + pats + "*.tmp\n# worktree: R1\n\n# mine\n" + end + "z\n",
			"R1", false,
			"*.tmp\n# mine\nz\n", true},
		{"an end marker outside any block is dropped",
			"a\n" + end + "b\n",
			"R1", true,
			"a\nb\n" + block(false, "R1"), false},
		{"a start inside a block: the first is torn",
			"a\n" + start + "# worktree: R1\nop\n" + start + "# worktree: R2\n" + end,
			"R2", false,
			"a\n" + block(false, "R1") + "op\n", true},
		{"a block without patterns gets them back",
			start + "# worktree: R1\n" + end,
			"R1", true,
			block(false, "R1"), false},
		{"a made line keeps the block when the last worktree line goes",
			"a\n" + start + pats + "# worktree: R1\n# made .cursor/: R1\n" + end,
			"R1", false,
			"a\n" + start + pats + "# made .cursor/: R1\n" + end, true},
		{"trailing blanks and CRLF on cursorkit lines",
			"a\r\n# >>> cursorkit >>>  \r\n/.cursor/mcp.json \r\n# worktree: R1\r\n# <<< cursorkit <<<\r\n",
			"R1", false,
			"a\r\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gitDir := newGitDir(t)
			shape := fakeShape(gitDir, tt.root)
			want := tt.want
			require.NoError(t, os.MkdirAll(filepath.Dir(shape.ExcludePath), 0o755))
			require.NoError(t, os.WriteFile(shape.ExcludePath, []byte(tt.initial), 0o644))
			if tt.add {
				require.NoError(t, addExclusion(context.Background(), shape))
			} else {
				removed, err := removeExclusion(context.Background(), shape)
				require.NoError(t, err)
				assert.Equal(t, tt.wantRemove, removed)
			}
			assert.Equal(t, want, readFile(t, shape.ExcludePath))
		})
	}
}

func TestSameRoot(t *testing.T) {
	assert.True(t, sameRoot(`C:\Work\Repo`, `c:\work\repo`, "windows"))
	assert.False(t, sameRoot("/work/Repo", "/work/repo", "linux"))
	assert.True(t, sameRoot("/work/repo/", "/work/repo", "linux"))
}

// TestExclusionInLinkedWorktrees: the worktrees of a repository share one
// block; it stays until the last of them removes its line, in either
// order, and git status shows none of cursorkit's files meanwhile.
func TestExclusionInLinkedWorktrees(t *testing.T) {
	for _, order := range []string{"main first", "worktree first"} {
		t.Run(order, func(t *testing.T) {
			r := newTestRepo(t)
			operator := "# operator\n*.log"
			r.write(r.dir, ".git/info/exclude", operator)
			wt := r.worktree("wt")
			main, linked := r.mustResolve(r.dir), r.mustResolve(wt)
			require.Equal(t, main.ExcludePath, linked.ExcludePath, "one shared file")
			assert.Equal(t, excludeLockDir(main), excludeLockDir(linked), "one shared lock")
			assert.Equal(t, filepath.Join(r.dir, ".git", "cursorkit-exclude.lock"), excludeLockDir(linked))
			ctx := context.Background()
			require.NoError(t, addExclusion(ctx, main))
			require.NoError(t, addExclusion(ctx, linked))
			assert.Equal(t, operator+"\n"+block(true, r.dir, wt), readFile(t, main.ExcludePath))
			for _, dir := range []string{r.dir, wt} {
				assertHidden(t, r, dir, true)
			}

			first, second := main, linked
			if order == "worktree first" {
				first, second = linked, main
			}
			removed, err := removeExclusion(ctx, first)
			require.NoError(t, err)
			assert.True(t, removed)
			has, err := hasExclusion(first)
			require.NoError(t, err)
			assert.False(t, has)
			has, err = hasExclusion(second)
			require.NoError(t, err)
			assert.True(t, has, "the block stays for the other worktree")
			assertHidden(t, r, second.Root, true)

			removed, err = removeExclusion(ctx, second)
			require.NoError(t, err)
			assert.True(t, removed)
			assert.Equal(t, operator, readFile(t, main.ExcludePath), "the operator's bytes, exactly")
			assertHidden(t, r, r.dir, false)
		})
	}
}

// assertHidden creates cursorkit's three files and an operator's .cursor
// file in dir and checks what git status shows: the operator's file always;
// cursorkit's as ignored when hidden, else as untracked.
func assertHidden(t *testing.T, r *testRepo, dir string, hidden bool) {
	t.Helper()
	r.write(dir, ".cursor/mcp.json", "{}\n")
	r.write(dir, ".cursor/.cursorkit-mcp-state.json", "{}\n")
	r.write(dir, ".cursor/.cursorkit-mcp.lock/owner.json", "{}\n")
	r.write(dir, ".cursor/rules/mine.mdc", "operator\n")
	ours := []string{".cursor/mcp.json", ".cursor/.cursorkit-mcp-state.json", ".cursor/.cursorkit-mcp.lock/"}
	status := r.git(dir, "status", "--porcelain", "--untracked-files=all")
	ignored := r.git(dir, "status", "--porcelain", "--untracked-files=all", "--ignored")
	assert.Contains(t, status, "?? .cursor/rules/mine.mdc\n")
	assert.Contains(t, ignored, "?? .cursor/rules/mine.mdc\n")
	for _, p := range ours {
		if hidden {
			assert.NotContains(t, status, p, "git status in %s", dir)
			assert.NotContains(t, ignored, "?? "+p, "git status --ignored in %s", dir)
			assert.Contains(t, ignored, "!! "+p, "git status --ignored in %s", dir)
		} else {
			assert.Contains(t, status, "?? "+p, "git status in %s", dir)
		}
	}
}

// TestExclusionEditsAreSerialised: 8 goroutines add and remove the lines of
// 8 worktrees on one exclude file; each line is there from its add to its
// remove, and the file ends as the operator's bytes exactly (no lost
// update). Runs in both lanes (no git).
func TestExclusionEditsAreSerialised(t *testing.T) {
	t.Parallel() // beside the crash rounds: both mostly wait on the disk
	const workers, rounds = 8, 15
	gitDir := newGitDir(t)
	base := filepath.Dir(gitDir)
	operator := "# operator's\n*.log\n!keep.log"
	require.NoError(t, os.MkdirAll(filepath.Join(gitDir, "info"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(gitDir, "info", "exclude"), []byte(operator), 0o644))
	ctx := context.Background()
	retry := func(op func() error) (busy int, err error) {
		for {
			err := op()
			if !failure.Is(err, failure.Resource) {
				return busy, err
			}
			busy++
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			shape := fakeShape(gitDir, filepath.Join(base, fmt.Sprintf("wt%d", w)))
			for i := range rounds {
				if _, err := retry(func() error { return addExclusion(ctx, shape) }); err != nil {
					errs <- err
					return
				}
				if has, err := hasExclusion(shape); err != nil || !has {
					errs <- fmt.Errorf("worker %d round %d: line missing after add (%v)", w, i, err)
					return
				}
				var removed bool
				if _, err := retry(func() (err error) { removed, err = removeExclusion(ctx, shape); return err }); err != nil || !removed {
					errs <- fmt.Errorf("worker %d round %d: line lost before remove (%v)", w, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	require.Empty(t, all)
	assert.Equal(t, operator, readFile(t, filepath.Join(gitDir, "info", "exclude")))
	entries, err := os.ReadDir(gitDir)
	require.NoError(t, err)
	assert.Equal(t, []string{"info"}, slices.Collect(func(yield func(string) bool) {
		for _, e := range entries {
			if !yield(e.Name()) {
				return
			}
		}
	}), "no lock left behind")
}

// FuzzParseExclude: whatever the file, an add then a remove of a root not
// in it keeps every operator line, and a second add changes nothing.
func FuzzParseExclude(f *testing.F) {
	f.Add("a\nb")
	f.Add("# >>> cursorkit >>>\n/.cursor/mcp.json\n# worktree: /x\nop\n")
	f.Add("# <<< cursorkit <<<\n# >>> cursorkit >>>\n# >>> cursorkit >>>\n# <<< cursorkit <<<\n")
	f.Add("# >>> cursorkit >>>\n# made .cursor/: /x\n# worktree: /x\n# made .cursor/: \n# <<< cursorkit <<<\n")
	f.Fuzz(func(t *testing.T, data string) {
		b := parseExclude([]byte(data))
		const root = "/fuzz/root"
		if b.has(root) {
			return
		}
		b.roots = append(b.roots, root)
		added := b.render(true)
		again := parseExclude(added)
		require.True(t, again.found && again.has(root))
		require.Equal(t, string(added), string(again.render(true)), "stable")
		again.roots = slices.DeleteFunc(again.roots, func(r string) bool { return r == root })
		out := string(again.render(again.inUse()))
		for _, line := range strings.Split(data, "\n") {
			c := strings.TrimRight(line, " \t\r")
			if c == "" || isOurs(c) || c == excludeStartMarker || c == excludeEndMarker {
				continue
			}
			require.Contains(t, out, c, "operator line kept")
		}
	})
}
