//go:build !unix

package testkit

// skipRaceExitSleep does nothing where a process cannot exec in place
// (Windows); the Windows lane does not use the race detector.
func skipRaceExitSleep() {}
