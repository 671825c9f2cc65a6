//go:build unix

package mcpstage

import (
	"context"
	"os"
	"syscall"

	"github.com/cursorkit/cursorkit/internal/procid"
)

// maxAncestors bounds the walk up the process tree: shell jobs are a
// handful of processes deep.
const maxAncestors = 64

// CallerOwner is the process a command-line stage's lease follows unless
// told otherwise: the caller's job, which outlives the transient processes
// that ran cursorkit for it. From this process's parent it goes up while
// the next ancestor is in this process's process group, which a shell
// with job control (a terminal's) gives each job it starts, and a service
// manager each service, and which a script's subshells, pipelines and
// helpers (a command substitution, xargs) share: `lease=$(cursorkit mcp
// stage …)` in a script gives the script. A parent in another group (cursorkit started as a job of its
// own, or by a program that gave it a group) is the owner. A caller that
// starts scripts without a group of their own (no job control) is itself
// in the group, so the lease follows it, or further up: such a script
// names itself with --owner-pid $$.
func CallerOwner(ctx context.Context) int {
	group := syscall.Getpgrp()
	owner := os.Getppid()
	for range maxAncestors {
		if !inGroup(owner, group) {
			break
		}
		up, err := procid.Parent(ctx, owner)
		if err != nil || up <= 0 || !inGroup(up, group) {
			break
		}
		owner = up
	}
	return owner
}

// inGroup reports whether process pid is in the process group group.
func inGroup(pid, group int) bool {
	pgid, err := syscall.Getpgid(pid)
	return err == nil && pgid == group
}
