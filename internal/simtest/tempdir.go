package simtest

import (
	"testing"

	"github.com/cursorkit/cursorkit/internal/testdir"
)

// TempDir is t.TempDir for both lanes; it is testdir.New, whose cleanup
// removes entries one by one (Go 1.26's os.RemoveAll fails under Wine 8)
// and waits out the lock Windows keeps on a just-killed simulator's image.
func TempDir(t testing.TB) string {
	t.Helper()
	return testdir.New(t)
}
