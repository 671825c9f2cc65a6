package mcpstage

import "github.com/cursorkit/cursorkit/internal/testkit"

// LockRoles are lock_test.go's child roles, for the package's one
// TestMain (stager_test.go).
var LockRoles = []testkit.Role{holdRole, contendRole, sleepRole}

// WithFault returns opts with a fault hook: fn is called at every named
// step of the protocol (tests kill the process there).
func WithFault(opts Options, fn func(point string)) Options {
	opts.fault = fn
	return opts
}

// FaultPoints are the named steps, in the order a stage and a last
// release pass them.
var FaultPoints = []string{"bootstrap-excluded", "bootstrap-marked", "bootstrap-created-dir", "locked", "baseline", "journalled", "replaced", "state-written", "state-removed", "unexcluded", "unlocked", "cursor-dir-removed"}

// LockDirs are the lock directories s takes: the worktree's, and the
// bootstrap lock of its exclude file when it is in git.
func LockDirs(s *Stager) []string {
	dirs := []string{s.lockPath}
	if s.shape.Kind != gitNone {
		dirs = append(dirs, excludeLockDir(s.shape))
	}
	return dirs
}

// ExcludePath is the exclude file s's worktree is listed in ("" outside
// git).
func ExcludePath(s *Stager) string { return s.shape.ExcludePath }
