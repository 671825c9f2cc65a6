//go:build unix

package review

import (
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAnUntrackedFIFOBreaksNoReview: an untracked named pipe is never
// read (a diff of it would block git or fail the whole review): the review
// of the rest goes on, in either scope that looks at the working tree.
// Git versions that list it as untracked get it named, "[not shown: ...]".
func TestAnUntrackedFIFOBreaksNoReview(t *testing.T) {
	for _, scope := range []Scope{ScopeWorkingTree, ScopeAuto} {
		t.Run(string(scope), func(t *testing.T) {
			r := base(t)
			r.write("new.go", "package main\n")
			require.NoError(t, syscall.Mkfifo(filepath.Join(r.dir, "pipe"), 0o644))
			d, err := collect(t, r, r.dir, scope, "")
			require.NoError(t, err)
			assert.Contains(t, d.Text, "+package main")
			if slices.Contains(d.Untracked, "pipe") {
				assert.Contains(t, d.Text, "[not shown: pipe is not a regular file]")
			}
		})
	}
}
