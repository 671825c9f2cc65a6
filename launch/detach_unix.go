//go:build unix

package launch

import (
	"context"
	"os/exec"
	"syscall"

	"github.com/cursorkit/cursorkit/internal/procid"
	"github.com/cursorkit/cursorkit/shim"
)

// startDetached starts cmd in a session of its own as this process's
// direct child, never through the launch guard: the guard kills what it
// holds when this program dies, and a detached child must outlive it.
func startDetached(ctx context.Context, cmd *exec.Cmd, _ shim.Command) (Detached, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return Detached{}, startError(err)
	}
	// Unreaped until its identity is read: its PID names it even if it exited.
	id, err := procid.Of(ctx, cmd.Process.Pid)
	go func() { _ = cmd.Wait() }()
	if err != nil { // started, but the PID alone is all there is
		return Detached{Identity: procid.Identity{PID: cmd.Process.Pid}}, err
	}
	return Detached{Identity: id}, nil
}
