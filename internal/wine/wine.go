// Package wine tells tests whether they run under Wine rather than Windows,
// so a test that needs a Windows tool Wine only stubs (where.exe output,
// taskkill /T, powershell.exe) can skip with that reason and nothing else.
package wine

import "testing"

// Detected reports whether the process runs under Wine. It is false on every
// OS but Windows.
func Detected() bool { return detected() }

// SkipIfWine skips t under Wine, naming the Windows behaviour Wine lacks.
func SkipIfWine(t testing.TB, lacks string) {
	t.Helper()
	if Detected() {
		t.Skipf("skipped under Wine only: Wine's %s", lacks)
	}
}
