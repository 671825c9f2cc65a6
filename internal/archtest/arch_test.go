// Package archtest checks the shape docs/architecture.md describes: the
// arrows between this module's packages, and that the generic mechanism
// knows no agent. It has tests only.
package archtest

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/cursorkit/cursorkit/"

// root is the module's directory (tests run in their package's directory).
const root = "../.."

// mechanism are the generic packages: they know no agent.
var mechanism = []string{"discovery", "shim", "launch", "supervise"}

// imports returns the module packages that the non-test Go files of dir
// import, sorted and without duplicates.
func imports(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, spec := range parsed.Imports {
			path, err := strconv.Unquote(spec.Path.Value)
			require.NoError(t, err)
			if rest, ok := strings.CutPrefix(path, module); ok {
				seen[rest] = true
			}
		}
	}
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// documentedArrows reads the arrows block of docs/architecture.md.
func documentedArrows(t *testing.T) map[string][]string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	require.NoError(t, err)
	block := regexp.MustCompile("(?s)```arrows\n(.*?)```").FindSubmatch(doc)
	require.NotNil(t, block, "docs/architecture.md has an arrows block")
	arrows := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(block[1])), "\n") {
		from, to, ok := strings.Cut(line, "->")
		require.True(t, ok, "arrow line %q", line)
		deps := strings.Fields(to)
		slices.Sort(deps)
		arrows[strings.TrimSpace(from)] = deps
	}
	return arrows
}

// TestArrowsMatchTheCode: docs/architecture.md's arrows are every
// package's imports of this module, exactly.
func TestArrowsMatchTheCode(t *testing.T) {
	for pkg, want := range documentedArrows(t) {
		got := imports(t, pkg)
		if want == nil {
			want = []string{}
		}
		if got == nil {
			got = []string{}
		}
		assert.Equal(t, want, got, "imports of %s", pkg)
	}
}

// packages returns every package of the module with non-test Go files,
// testdata and dot directories aside, as paths relative to the module.
func packages(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			require.NoError(t, err)
			if rel = filepath.ToSlash(rel); !slices.Contains(out, rel) {
				out = append(out, rel)
			}
		}
		return nil
	})
	require.NoError(t, err)
	slices.Sort(out)
	return out
}

// TestEveryPackageHasArrows: a package cannot slip past the arrows: every
// package of the module is in docs/architecture.md's block, and every
// package there exists.
func TestEveryPackageHasArrows(t *testing.T) {
	arrows := documentedArrows(t)
	all := packages(t)
	require.NotEmpty(t, all)
	for _, pkg := range all {
		_, ok := arrows[pkg]
		assert.True(t, ok, "package %s is not in docs/architecture.md's arrows", pkg)
	}
	for pkg := range arrows {
		assert.Contains(t, all, pkg, "docs/architecture.md's arrows name %s, which has no Go files", pkg)
	}
}

// TestMechanismKnowsNoAgent: discovery, shim, launch and supervise reach
// only each other, failure and internal helpers, even indirectly, and
// their non-test code never mentions an agent by name (the module's own
// name, cursorkit, aside).
func TestMechanismKnowsNoAgent(t *testing.T) {
	for _, pkg := range mechanism {
		deps := map[string]bool{}
		var visit func(string)
		visit = func(p string) {
			for _, d := range imports(t, p) {
				if !deps[d] {
					deps[d] = true
					visit(d)
				}
			}
		}
		visit(pkg)
		for d := range deps {
			allowed := slices.Contains(mechanism, d) || d == "failure" ||
				(strings.HasPrefix(d, "internal/") && !slices.Contains([]string{"internal/agentsim", "internal/realcli", "internal/modelapi"}, d))
			assert.True(t, allowed, "%s depends on %s", pkg, d)
		}
		files, err := filepath.Glob(filepath.Join(root, pkg, "*.go"))
		require.NoError(t, err)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			require.NoError(t, err)
			text := strings.ReplaceAll(strings.ToLower(string(src)), "cursorkit", "")
			for _, name := range []string{"cursor", "claude", "codex", "gemini"} {
				assert.NotContains(t, text, name, "%s mentions %s", f, name)
			}
		}
	}
}
