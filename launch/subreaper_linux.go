package launch

import (
	"golang.org/x/sys/unix"

	"github.com/cursorkit/cursorkit/failure"
)

// EnableSubreaper makes the calling process a child subreaper (Linux
// PR_SET_CHILD_SUBREAPER), so descendants orphaned by a double fork or a
// setsid daemon are reparented to it instead of init, where KillTree finds
// them by their launch token, kills and reaps them. It is a process-wide
// opt-in that the cursorkit CLI turns on once at startup; a library user
// should enable it only if nothing else in the program calls wait for any
// child (Wait4(-1)), which would race with the PID-specific reaping here.
// Orphans that exit by themselves before a KillTree stay zombies until the
// program exits.
func EnableSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return failure.Wrap(failure.Setup, err, "cannot become a child subreaper")
	}
	return nil
}
