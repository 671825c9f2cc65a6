package testkit

// Test-only access to the package's internals.

// RaceEnabled reports whether this binary was built with -race.
const RaceEnabled = raceEnabled

// SidecarSuffix names the file that makes an installed copy play a role.
const SidecarSuffix = sidecarSuffix

// RemoveAll is the Wine-safe removal behind TempDir.
var RemoveAll = removeAll

// ForgetIdentity makes w believe the watched process pid started at
// another time, as if pid had been reused by another process.
func (w *Watch) ForgetIdentity(pid int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.known[pid].id++
}

// Running reports whether pid names a running process, not a zombie.
func Running(pid int) bool {
	_, ok := lookup(pid)
	return ok
}
