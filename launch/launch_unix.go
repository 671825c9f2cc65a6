//go:build unix

package launch

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/shim"
)

// sweepRounds bounds the snapshots of one KillTree: each round freezes the
// victims it found, and the next looks for children forked before the
// freeze.
const sweepRounds = 4

// reapWait bounds how long KillTree waits for the processes it SIGKILLed
// (and the root) to exit.
const reapWait = 2 * time.Second

// sysProcess is the POSIX-specific state of a Process.
type sysProcess struct {
	// cmd is the started child (POSIX starts it through os/exec; Windows
	// through a CreateProcess of launch's own).
	cmd *exec.Cmd
	// owner signals and reaps the tree when a launch guard owns it (Linux,
	// docs/architecture.md "The launch guard"); nil when this process is
	// the child's parent and does it itself.
	owner treeOwner
	// reaped reports that this process reaped the root (no guard): its
	// PID, which is the group ID, may then be reused.
	reaped atomic.Bool
}

// treeOwner is what signals, waits for and reaps the child's tree on this
// process's behalf: the launch guard. Its methods run with p.mu held,
// except wait.
type treeOwner interface {
	terminate() error
	killTree() (KillReport, error)
	wait() (ExitStatus, error)
	// close ends the guard after the child exited: whatever is left of the
	// tree is killed and reaped, then the guard itself.
	close() error
}

// errNoGuard is startGuarded's answer when no launch guard could start
// and nothing did: the child is then started directly.
var errNoGuard = errors.New("no launch guard")

func (p *Process) reaped() bool { return p.sys.reaped.Load() }

func (p *Process) start(ctx context.Context, cmd *exec.Cmd, plan shim.Command, stdin io.Reader) error {
	owner, err := p.startGuarded(ctx, cmd)
	switch {
	case err == nil:
		p.sys.owner = owner
		p.feedStdin(stdin)
		return nil
	case !errors.Is(err, errNoGuard):
		return err
	}
	return p.startDirect(ctx, cmd, stdin)
}

// startDirect starts the child as this process's own child, in a new
// process group: where no launch guard can be used.
func (p *Process) startDirect(ctx context.Context, cmd *exec.Cmd, stdin io.Reader) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	afterStart, onFailure, err := p.pipes(cmd)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		onFailure()
		return failure.Wrap(failure.Cancelled, err, "launch cancelled before start")
	}
	if err := cmd.Start(); err != nil {
		onFailure()
		return startError(err)
	}
	afterStart()
	cmd.Env = nil // the child has it; many sessions at once need not keep copies
	p.sys.cmd = cmd
	p.root = proc{Pid: cmd.Process.Pid, PPid: os.Getpid(), Group: cmd.Process.Pid}
	if st, err := startTimeOf(cmd.Process.Pid); err == nil {
		p.root.StartTime = st
	}
	p.feedStdin(stdin)
	return nil
}

// groupSignalSafe reports whether kill(-leader) can only reach the group
// that leader leads. While the leader is unreaped its PID, which is the
// group ID, cannot be reused, so the group ID cannot name another group.
// After reaping, a snapshot must show members of the group and no process
// holding the group ID as its PID (a new group with that ID would be led by
// such a process).
func groupSignalSafe(leader int, reaped bool, table []proc, tableErr error) bool {
	if !reaped {
		return true
	}
	if tableErr != nil {
		return false
	}
	members := false
	for _, e := range table {
		if e.Pid == leader {
			return false
		}
		if e.Group == leader {
			members = true
		}
	}
	return members
}

// terminateGroup sends SIGTERM, then SIGCONT so stopped members can act on
// it, to the group leader leads, when that is safe (groupSignalSafe).
func terminateGroup(leader int, reaped bool) error {
	var table []proc
	var tableErr error
	if reaped {
		table, tableErr = snapshot()
	}
	if !groupSignalSafe(leader, reaped, table, tableErr) {
		return failure.Wrap(failure.Process, os.ErrProcessDone, "process group has exited")
	}
	if err := syscall.Kill(-leader, syscall.SIGTERM); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return failure.Wrap(failure.Process, os.ErrProcessDone, "process group has exited")
		}
		return failure.Wrap(failure.Process, err, "cannot signal the process group")
	}
	_ = syscall.Kill(-leader, syscall.SIGCONT)
	return nil
}

func (p *Process) terminate() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sys.owner != nil {
		return p.sys.owner.terminate()
	}
	return terminateGroup(p.root.Pid, p.reaped())
}

// waitExit waits for the root: through the guard, or as its parent.
func (p *Process) waitExit() (ExitStatus, error) {
	if p.sys.owner != nil {
		return p.sys.owner.wait()
	}
	return p.waitChild()
}

// release reaps the root when this process is its parent; a guard reaps
// it by itself. Called with p.mu held, after Wait returned.
func (p *Process) release() error {
	if p.sys.owner != nil {
		return nil
	}
	return p.releaseChild()
}

// closeKill is Close's tree kill before the child is reaped, with p.mu
// held. A child still running gets the full KillTree. A child that exited
// by itself is left to closeSweep, which can tell cheaply, once the child
// is reaped, whether anything is left to kill.
func (p *Process) closeKill(exited bool) error {
	if exited {
		return nil
	}
	_, err := p.killTree()
	return err
}

// closeSweep runs with p.mu held after the child was reaped. A guard is
// told to finish: it kills and reaps whatever is left of the tree (a
// daemon the child left behind, say) and exits. Without a guard, the full
// KillTree runs when the child had exited by itself and its process group
// still has members; descendants that left the group are then out of
// reach (docs/contract.md "Supervision").
func (p *Process) closeSweep(exited bool) error {
	if p.sys.owner != nil {
		return p.sys.owner.close()
	}
	if !exited || !p.groupHasMembers() {
		return nil
	}
	_, err := p.killTree()
	return err
}

// groupHasMembers reports, once the child was reaped, whether its process
// group still has members: kill(-pgid, 0) fails with ESRCH only when the
// group is empty. After reaping, members keep the group ID, the child's
// PID, from being reused, so ESRCH cannot come from another group; a
// reused PID that leads a new group only makes the answer a false alarm.
func (p *Process) groupHasMembers() bool {
	return !errors.Is(syscall.Kill(-p.root.Pid, 0), syscall.ESRCH)
}

// killTree runs with p.mu held.
func (p *Process) killTree() (KillReport, error) {
	if p.sys.owner != nil {
		return p.sys.owner.killTree()
	}
	report, killed, err := freezeAndKill(p.root.Pid, func(table []proc, tableErr error) bool {
		return groupSignalSafe(p.root.Pid, p.reaped(), table, tableErr)
	}, func(table []proc) []proc { return descendants(p.root, table) })
	// The root itself, through os.Process (a pidfd on Linux), which is a
	// no-op once it has been reaped.
	_ = p.sys.cmd.Process.Signal(syscall.SIGKILL)
	// Waiting for every exit, the root's included, means the tree is gone
	// when KillTree returns. The root is never reaped here: it is os/exec's.
	deadline := time.Now().Add(reapWait)
	if !p.reaped() {
		if rootPin, _ := pinProcess(p.root); rootPin != nil {
			rootPin.awaitExit(deadline)
			rootPin.release()
		}
	}
	for _, pn := range killed {
		pn.awaitExit(deadline)
		pn.release()
	}
	return report, err
}

// freezeAndKill is KillTree's sweep, for this process's own child and for
// the launch guard alike. It freezes before it kills: the group that
// leader leads (when groupSafe says a signal to it can reach no other
// group) and every victim get SIGSTOP, and the table is read again until a
// snapshot shows no new victim, so a process forked during the sweep cannot
// slip out of the parent chain. Then SIGKILL goes to the group and to every
// pinned victim. Each victim is pinned by PID and start time (a pidfd on
// Linux) before any signal, so a reused PID is never hit. It returns the
// pins of the victims it killed, for the caller to await and release.
func freezeAndKill(leader int, groupSafe func([]proc, error) bool, victims func([]proc) []proc) (KillReport, []*pin, error) {
	report := KillReport{Method: MethodProcessGroup}
	var errs []error
	pins := map[int]*pin{}
	skipped := map[int]bool{}
	signalGroup := false
	for round := 0; round < sweepRounds; round++ {
		table, tableErr := snapshot()
		if tableErr != nil {
			errs = append(errs, failure.Wrap(failure.Process, tableErr, "cannot read the process table"))
		}
		if round == 0 {
			signalGroup = groupSafe(table, tableErr)
			if signalGroup {
				_ = syscall.Kill(-leader, syscall.SIGSTOP)
			}
		}
		// Pin every victim before any SIGKILL: killing a parent first would
		// reparent its children and hide them from the parent chain.
		found := false
		for _, v := range victims(table) {
			if pins[v.Pid] != nil || skipped[v.Pid] {
				continue
			}
			pn, mismatch := pinProcess(v)
			if pn == nil {
				if mismatch {
					skipped[v.Pid] = true
				}
				continue
			}
			pins[v.Pid] = pn
			pn.signal(syscall.SIGSTOP)
			found = true
		}
		if !found {
			break
		}
	}
	report.Skipped = len(skipped)
	if signalGroup {
		err := syscall.Kill(-leader, syscall.SIGKILL)
		switch {
		case err == nil:
			report.Group = true
		case !errors.Is(err, syscall.ESRCH):
			errs = append(errs, failure.Wrap(failure.Process, err, "cannot kill the process group"))
		}
	}
	var killed []*pin
	for _, pn := range pins {
		if pn.signal(syscall.SIGKILL) {
			killed = append(killed, pn)
		} else {
			pn.release()
		}
	}
	report.Swept = len(killed)
	return report, killed, errors.Join(errs...)
}

// pipes creates the three pipes and wires the child's ends into cmd. It
// returns the function that closes the child's ends after start (or on
// failure) and our ends on failure.
func (p *Process) pipes(cmd *exec.Cmd) (afterStart func(), onFailure func(), err error) {
	child, err := p.stdioPipes()
	if err != nil {
		return nil, nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = child[0], child[1], child[2]
	afterStart = func() { closeFiles(child[:]...) }
	onFailure = func() { closeFiles(append(child[:], p.stdin, p.stdout, p.stderr)...) }
	return afterStart, onFailure, nil
}
