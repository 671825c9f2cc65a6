package testkit

import (
	"os"
	"testing"
)

// UnderWine reports whether the process runs under Wine rather than
// Windows. It is false on every OS but Windows.
func UnderWine() bool { return underWine() }

// SkipIfWine skips t under Wine only, naming the Windows behaviour Wine
// lacks (where.exe output, taskkill /T, powershell.exe...), so a test skips
// for that reason and nothing else.
func SkipIfWine(t testing.TB, lacks string) {
	t.Helper()
	if UnderWine() {
		t.Skipf("skipped under Wine only: Wine's %s", lacks)
	}
}

// Symlink makes link point to target, or skips t where that cannot be done:
// under Wine (os.Symlink succeeds there, but neither Lstat nor CreateFile
// then sees a link), and on a Windows account without the privilege.
func Symlink(t testing.TB, target, link string) {
	t.Helper()
	SkipIfWine(t, "symbolic links (os.Symlink succeeds, but neither Lstat nor CreateFile then sees a link)")
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot make a symbolic link here: %v", err)
	}
}
