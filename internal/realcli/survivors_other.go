//go:build !linux

package realcli

// Survivors reports that a run's surviving processes cannot be told here:
// on Windows the Job Object is what takes them all.
func Survivors(home string) (pids []int, ok bool) { return nil, false }
