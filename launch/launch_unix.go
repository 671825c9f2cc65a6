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
// victims it found, the next looks for children forked before the freeze.
const sweepRounds = 4

// reapWait bounds KillTree's wait for what it SIGKILLed to exit.
const reapWait = 2 * time.Second

type sysProcess struct {
	cmd    *exec.Cmd   // the started child, without a guard
	owner  treeOwner   // the launch guard, nil when this process is the parent
	reaped atomic.Bool // by this process, so its PID, the group ID, may be reused
}

// treeOwner signals, waits for and reaps the child's tree on this process's
// behalf: the launch guard. Its methods run with p.mu held, except wait.
type treeOwner interface {
	terminate() error
	killTree() (KillReport, error)
	wait() (ExitStatus, error)
	close() error // after the child exited: kill and reap what is left
}

// errNoGuard: no launch guard can run here and nothing started.
var errNoGuard = errors.New("no launch guard")

func (p *Process) reaped() bool { return p.sys.reaped.Load() }

func (p *Process) start(ctx context.Context, cmd *exec.Cmd, _ shim.Command, stdin io.Reader) error {
	owner, err := p.startGuarded(ctx, cmd)
	if errors.Is(err, errNoGuard) {
		return p.startDirect(ctx, cmd, stdin)
	}
	if err != nil {
		return err
	}
	p.sys.owner = owner
	p.feedStdin(stdin)
	return nil
}

// startDirect starts the child as this process's own, in a new group.
func (p *Process) startDirect(ctx context.Context, cmd *exec.Cmd, stdin io.Reader) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	child, err := p.stdioPipes()
	if err != nil {
		return err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = child[0], child[1], child[2]
	if err = cancelledBeforeStart(ctx); err == nil {
		err = startError(cmd.Start())
	}
	closeFiles(child[:]...)
	if err != nil {
		p.closePipes()
		return err
	}
	cmd.Env = nil // the child has it; many sessions at once need not keep copies
	p.sys.cmd = cmd
	st, _ := startTimeOf(cmd.Process.Pid) // 0, unknown, when unreadable
	p.root = proc{Pid: cmd.Process.Pid, PPid: os.Getpid(), Group: cmd.Process.Pid, StartTime: st}
	p.feedStdin(stdin)
	return nil
}

// groupSignalSafe reports whether kill(-leader.Pid) can only reach
// leader's group. While the leader is unreaped its PID, the group ID,
// cannot be reused. After reaping (or when this process is not its
// parent), a snapshot must show the leader itself still holding its PID
// (a zombie its parent has not reaped, say PID 1 of a container), or
// members of the group and no other process holding the group ID as its
// PID (it would lead a new group).
func groupSignalSafe(leader proc, reaped bool, table []proc, tableErr error) bool {
	if !reaped {
		return true
	}
	if tableErr != nil {
		return false
	}
	members := false
	for _, e := range table {
		if e.Pid == leader.Pid {
			return e.Same(leader)
		}
		if e.Group == leader.Pid {
			members = true
		}
	}
	return members
}

// terminateGroup sends SIGTERM, then SIGCONT so stopped members can act on
// it, to leader's group when groupSignalSafe.
func terminateGroup(leader proc, reaped bool) error {
	var table []proc
	var tableErr error
	if reaped {
		table, tableErr = snapshot()
	}
	if !groupSignalSafe(leader, reaped, table, tableErr) {
		return errGroupExited()
	}
	if err := syscall.Kill(-leader.Pid, syscall.SIGTERM); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return errGroupExited()
		}
		return failure.Wrap(failure.Process, err, "cannot signal the process group")
	}
	_ = syscall.Kill(-leader.Pid, syscall.SIGCONT)
	return nil
}

// errGroupExited means no process of the group is left to ask to stop.
func errGroupExited() error {
	return failure.Wrap(failure.Process, os.ErrProcessDone, "process group has exited")
}

func (p *Process) terminate() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sys.owner != nil {
		return p.sys.owner.terminate()
	}
	return terminateGroup(p.root, p.reaped())
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
// held: a child that exited by itself is left to closeSweep, which can tell
// cheaply, once it is reaped, whether anything is left to kill.
func (p *Process) closeKill(exited bool) error {
	if exited {
		return nil
	}
	_, err := p.killTree()
	return err
}

// closeSweep runs with p.mu held after the child was reaped. A guard kills
// and reaps what is left of the tree (a daemon the child left, say).
// Without one, KillTree runs when the child had exited by itself and its
// group still has members; descendants that left the group are then out of
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

// groupHasMembers reports, once the child was reaped, whether its group
// still has members (kill(-pgid, 0) fails with ESRCH only for an empty
// group). Members keep the group ID from being reused, so ESRCH cannot come
// from another group; a reused PID leading a new group is a false alarm.
func (p *Process) groupHasMembers() bool {
	return !errors.Is(syscall.Kill(-p.root.Pid, 0), syscall.ESRCH)
}

// killTree runs with p.mu held.
func (p *Process) killTree() (KillReport, error) {
	if p.sys.owner != nil {
		return p.sys.owner.killTree()
	}
	report, killed, err := freezeAndKill(p.root, p.reaped, func(table []proc) []proc { return descendants(p.root, table) })
	// The root itself, through os.Process (a pidfd on Linux), which is a
	// no-op once it has been reaped.
	_ = p.sys.cmd.Process.Signal(syscall.SIGKILL)
	// Waiting for every exit, the root's included, means the tree is gone
	// when KillTree returns. The root is never reaped here: it is os/exec's.
	if !p.reaped() {
		if rootPin, _ := pinProcess(p.root); rootPin != nil {
			killed = append([]*pin{rootPin}, killed...)
		}
	}
	awaitKilled(killed)
	return report, err
}

// freezeAndKill is KillTree's sweep, with or without a guard. It freezes
// before it kills: leader's group (none for leader 0, and only when
// groupSignalSafe) and every victim get SIGSTOP, and the table is read
// again until it shows no new victim, so a process forked during the sweep
// cannot slip out of the parent chain. Then SIGKILL goes to the group and
// every victim. Each victim is pinned by PID and start time (a pidfd on
// Linux) before any signal, so a reused PID is never hit. It returns the
// pins of the victims it killed, for awaitKilled.
func freezeAndKill(leader proc, leaderReaped func() bool, victims func([]proc) []proc) (KillReport, []*pin, error) {
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
			signalGroup = leader.Pid > 0 && groupSignalSafe(leader, leaderReaped(), table, tableErr)
			if signalGroup {
				_ = syscall.Kill(-leader.Pid, syscall.SIGSTOP)
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
		err := syscall.Kill(-leader.Pid, syscall.SIGKILL)
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

// awaitKilled waits up to reapWait for the pinned processes to exit and
// releases their pins; it returns those that exited.
func awaitKilled(killed []*pin) (exited []proc) {
	deadline := time.Now().Add(reapWait)
	for _, pn := range killed {
		if pn.awaitExit(deadline) {
			exited = append(exited, pn.proc)
		}
		pn.release()
	}
	return exited
}
