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

// TestMechanismKnowsNoAgent: discovery, shim, launch and supervise reach no
// agent package, even indirectly, and their non-test code never mentions
// Cursor (the module's own name, cursorkit, aside).
func TestMechanismKnowsNoAgent(t *testing.T) {
	agentPackages := []string{"cursor", "probe", "probe/settingsapi", "agent", "event", "cmd/cursorkit"}
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
		for _, a := range agentPackages {
			assert.False(t, deps[a], "%s depends on %s", pkg, a)
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
			assert.NotContains(t, text, "cursor", "%s mentions cursor", f)
		}
	}
}
