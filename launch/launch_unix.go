//go:build unix

package launch

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
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
// (and the root) to exit before reaping the orphans among them.
const reapWait = 2 * time.Second

// sysProcess is the POSIX-specific state of a Process.
type sysProcess struct {
	token  string      // the launch token (Linux), "" elsewhere
	reaped atomic.Bool // the root has been reaped: its PID may be reused
}

func (p *Process) reaped() bool { return p.sys.reaped.Load() }

func (p *Process) start(ctx context.Context, cmd *exec.Cmd, plan shim.Plan, stdin io.Reader) error {
	token, err := newLaunchToken()
	if err != nil {
		return err
	}
	if token != "" {
		cmd.Env = withLaunchToken(cmd.Env, token)
	}
	p.sys.token = token
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
	p.cmd = cmd
	p.root = proc{Pid: cmd.Process.Pid, PPid: os.Getpid(), Group: cmd.Process.Pid}
	if st, err := startTimeOf(cmd.Process.Pid); err == nil {
		p.root.StartTime = st
	}
	p.feedStdin(stdin)
	return nil
}

// groupSignalSafe reports whether kill(-pgid) can only reach the child's
// group. While the leader is unreaped its PID, which is the group ID, cannot
// be reused, so the group ID cannot name another group. After reaping, a
// snapshot must show members of the group and no process holding the group
// ID as its PID (a new group with that ID would be led by such a process).
func (p *Process) groupSignalSafe(table []proc, tableErr error) bool {
	if !p.reaped() {
		return true
	}
	if tableErr != nil {
		return false
	}
	members := false
	for _, e := range table {
		if e.Pid == p.root.Pid {
			return false
		}
		if e.Group == p.root.Pid {
			members = true
		}
	}
	return members
}

func (p *Process) terminate() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var table []proc
	var tableErr error
	if p.reaped() {
		table, tableErr = snapshot()
	}
	if !p.groupSignalSafe(table, tableErr) {
		return failure.Wrap(failure.Process, os.ErrProcessDone, "process group has exited")
	}
	if err := syscall.Kill(-p.root.Pid, syscall.SIGTERM); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return failure.Wrap(failure.Process, os.ErrProcessDone, "process group has exited")
		}
		return failure.Wrap(failure.Process, err, "cannot signal the process group")
	}
	_ = syscall.Kill(-p.root.Pid, syscall.SIGCONT)
	return nil
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

// closeSweep runs with p.mu held after release reaped the child. When the
// child had exited by itself it runs the full KillTree only if something
// may be left of the tree (see mayHaveLeftovers), which after a clean turn
// is nothing: the sweep's process-table snapshots are the costly part of
// supervising many short runs.
func (p *Process) closeSweep(exited bool) error {
	if !exited || !p.mayHaveLeftovers() {
		return nil
	}
	_, err := p.killTree()
	return err
}

// mayHaveLeftovers reports, once the child exited and was reaped, whether a
// process of its tree may still run; false is a proof, true may be a false
// alarm. It is what a KillTree at this point could find:
//   - members of the child's process group: kill(-pgid, 0) fails with
//     ESRCH only when the group is empty. (Before reaping, the zombie
//     child itself would count as a member. After reaping, members keep
//     the group ID, the child's PID, from being reused, so ESRCH cannot
//     come from another group; a reused PID that leads a new group only
//     makes the answer a false alarm.)
//   - descendants that left the group (setsid): no parent chain leads to
//     them from an exited child, whose children were reparented when it
//     exited, so KillTree can only find them as orphans reparented to
//     this process, and their descendants (subreaper mode, orphansMayRemain).
func (p *Process) mayHaveLeftovers() bool {
	if err := syscall.Kill(-p.root.Pid, 0); !errors.Is(err, syscall.ESRCH) {
		return true
	}
	return p.orphansMayRemain()
}

// killTree runs with p.mu held. It freezes before it kills: the group and
// every pinned victim get SIGSTOP, and the table is read again until a
// snapshot shows no new victim, so a process forked during the sweep cannot
// slip out of the parent chain. Then SIGKILL goes to the group, the root
// and every pinned victim.
func (p *Process) killTree() (KillReport, error) {
	report := KillReport{Method: MethodProcessGroup}
	self := os.Getpid()
	var errs []error
	pins := map[int]*pin{}
	skipped := map[int]bool{}
	defer func() {
		for _, pn := range pins {
			pn.release()
		}
	}()
	groupSafe := false
	for round := 0; round < sweepRounds; round++ {
		table, tableErr := snapshot()
		if tableErr != nil {
			errs = append(errs, failure.Wrap(failure.Process, tableErr, "cannot read the process table"))
		}
		if round == 0 {
			groupSafe = p.groupSignalSafe(table, tableErr)
			if groupSafe {
				_ = syscall.Kill(-p.root.Pid, syscall.SIGSTOP)
			}
		}
		// Pin every victim before any SIGKILL: killing a parent first would
		// reparent its children and hide them from the parent chain.
		found := false
		for _, v := range p.victims(self, table) {
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
	if groupSafe {
		err := syscall.Kill(-p.root.Pid, syscall.SIGKILL)
		switch {
		case err == nil:
			report.Group = true
		case !errors.Is(err, syscall.ESRCH):
			errs = append(errs, failure.Wrap(failure.Process, err, "cannot kill the process group"))
		}
	}
	// The root itself, through os.Process (a pidfd on Linux), which is a
	// no-op once it has been reaped.
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	var killed []*pin
	for _, pn := range pins {
		if pn.signal(syscall.SIGKILL) {
			killed = append(killed, pn)
		}
	}
	report.Swept = len(killed)
	// Killed processes reparented to self (subreaper mode, directly or
	// because their killed parent exited first) are reaped here: nobody else
	// in this program waits for them. Waiting for every exit first, the
	// root's included, lets the kernel finish reparenting. The root itself
	// is never reaped here: it is os/exec's.
	deadline := time.Now().Add(reapWait)
	if !p.reaped() {
		if rootPin, _ := pinProcess(p.root); rootPin != nil {
			rootPin.awaitExit(deadline)
			rootPin.release()
		}
	}
	for _, pn := range killed {
		pn.awaitExit(deadline)
	}
	for _, pn := range killed {
		if pn.reapIfOrphan(self) {
			report.Reaped++
		}
	}
	return report, errors.Join(errs...)
}

// victims returns the processes of table to kill individually: the
// descendants of the root by parent chain, plus orphans that carry the
// root's launch token (in subreaper mode those reparented to self;
// otherwise any process started after the root), and their descendants.
func (p *Process) victims(self int, table []proc) []proc {
	if len(table) == 0 {
		return nil
	}
	out := descendants(p.root, table)
	seen := make(map[int]bool, len(out))
	for _, v := range out {
		seen[v.Pid] = true
	}
	if p.sys.token == "" {
		return out // no token to recognise orphans by (macOS)
	}
	candidates := orphans(self, p.root, table)
	if !subreaperMode() {
		// Without the subreaper, an orphan of the tree (a setsid helper whose
		// parent died first, say) is reparented to init or to another
		// subreaper: no parent chain leads to it, but it still carries the
		// launch token. Only processes started after the root can.
		candidates = startedAfter(p.root, self, table)
	}
	for _, o := range candidates {
		if seen[o.Pid] || !hasLaunchToken(o.Pid, p.sys.token) {
			continue
		}
		seen[o.Pid] = true
		out = append(out, o)
		for _, d := range descendants(o, table) {
			if !seen[d.Pid] {
				seen[d.Pid] = true
				out = append(out, d)
			}
		}
	}
	return out
}

// startedAfter returns the processes of table, other than self and root,
// started after root: the only ones that can carry root's launch token.
func startedAfter(root proc, self int, table []proc) []proc {
	var out []proc
	for _, e := range table {
		if e.Pid == root.Pid || e.Pid == self || e.StartTime == 0 || e.StartTime < root.StartTime {
			continue
		}
		out = append(out, e)
	}
	return out
}

// withLaunchToken returns env with token added to LaunchIDEnv: appended to
// the last existing value (exec keeps the last duplicate), or as a new
// entry. env itself is not modified.
func withLaunchToken(env []string, token string) []string {
	out := make([]string, 0, len(env)+1)
	value := token
	for _, kv := range env {
		if old, ok := strings.CutPrefix(kv, LaunchIDEnv+"="); ok {
			if old != "" {
				value = old + "," + token
			}
			continue
		}
		out = append(out, kv)
	}
	return append(out, LaunchIDEnv+"="+value)
}
