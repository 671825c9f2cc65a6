package simtest

// skipRaceExitSleep does nothing on Windows, which cannot exec in place.
func skipRaceExitSleep() {}
