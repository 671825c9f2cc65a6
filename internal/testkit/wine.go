package testkit

import "testing"

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
