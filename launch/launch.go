// Package launch starts a shim.Command as a supervised child and kills its
// whole process tree on request: no shell, an explicit environment and
// working directory, stdin a pipe (the prompt travels only there). POSIX: a
// new process group. Linux: the child is started by the launch guard, this
// program's binary run again as a child subreaper (from this package's
// init, before main) that adopts every orphan of a tree and kills every
// tree it holds when this program dies in any way, SIGKILL included
// (docs/architecture.md "The launch guard"). Windows: the child is created
// suspended inside a kill-on-close Job Object and only then resumed, so no
// grandchild starts outside the job and a kill of this program at any point
// takes it. Launch never reads the output nor decides a verdict: package
// supervise does, with Terminate and KillTree.
package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/childenv"
	"github.com/cursorkit/cursorkit/shim"
)

// Options says how to start a plan.
type Options struct {
	// Dir is the child's working directory, empty for the current one; a
	// missing or non-directory Dir is a failure.Input error.
	Dir string
	// Env is the child's full environment: nil for os.Environ(), empty
	// non-nil for none. Either way cursorkit's own secrets
	// (childenv.Secrets) are removed (docs/contract.md, "Security"). On
	// Linux, Start adds LaunchIDEnv, which tells the launch guard which
	// tree an orphan it adopts belongs to.
	Env []string
	// Stdin is copied to the child's stdin pipe by a goroutine, which then
	// closes it; nil closes it at once. The copy ends at Stdin's EOF or
	// error, or when the child or Close closed the pipe (a Stdin blocked in
	// Read keeps the goroutine until the Read returns, as with os/exec).
	Stdin io.Reader
}

// LaunchIDEnv names the variable Start adds to the child's environment on
// Linux: comma-separated random tokens, the last one this Process's (earlier
// ones an outer cursorkit's).
const LaunchIDEnv = "CURSORKIT_LAUNCH_ID"

// ExitStatus is how the direct child ended.
type ExitStatus struct {
	Code     int  `json:"code"`              // -1 when a signal killed the child
	Signal   int  `json:"signal,omitzero"`   // the signal that killed it (POSIX)
	Signaled bool `json:"signaled,omitzero"` // a signal ended it (POSIX)
}

// String renders the status as "exit status N" or "signal N".
func (s ExitStatus) String() string {
	if s.Signaled {
		return fmt.Sprintf("signal %d", s.Signal)
	}
	return fmt.Sprintf("exit status %d", s.Code)
}

// Success reports a zero exit code without a signal.
func (s ExitStatus) Success() bool { return !s.Signaled && s.Code == 0 }

// Kill methods reported by KillReport.Method.
const (
	MethodProcessGroup = "process-group"      // POSIX: SIGKILL to the group plus a descendant sweep
	MethodJobObject    = "job-object"         // Windows: TerminateJobObject
	MethodTreeWalk     = "taskkill+tree-walk" // Windows without a job
)

// The codes of the warnings a launch records; warning has their messages.
const (
	// WarnNoJob (Windows): no job object, so KillTree walks the tree.
	WarnNoJob = "no_job_object"
	// WarnJobAfterStart (Windows before 10 1607): the child joined its job
	// after it was created; a kill of this program in between would have
	// left it outside any job.
	WarnJobAfterStart = "job_after_start"
	// WarnNoGuard (Linux): no launch guard, so a descendant that leaves the
	// group and its parent, or the tree after a SIGKILL of this program,
	// may survive.
	WarnNoGuard = "no_guard"
	// WarnNoSubreaper (Linux): orphans are not reparented to the guard.
	WarnNoSubreaper = "no_subreaper"
	// WarnNoBreakaway (Windows): a detached child dies with this process's
	// job, which forbids breakaway.
	WarnNoBreakaway = "no_breakaway"
)

// KillReport says what KillTree did.
type KillReport struct {
	Method  string `json:"method"`           // one of the Method constants
	Group   bool   `json:"group"`            // the group (POSIX) or job (Windows) was signalled or terminated
	Swept   int    `json:"swept"`            // descendants killed one by one, beyond the group or job
	Reaped  int    `json:"reaped,omitzero"`  // orphans the launch guard adopted, killed and reaped
	Skipped int    `json:"skipped,omitzero"` // candidates whose PID and start time could not be confirmed, left alone
}

// Process is a started plan. Its methods are safe for concurrent use; the
// read ends from Stdout and Stderr follow *os.File's rules.
type Process struct {
	stdout *os.File
	stderr *os.File
	stdin  *os.File // our write end, closed by the copy or by Close
	root   proc     // the child's identity, for the sweep

	waitOnce sync.Once
	waitDone chan struct{}
	status   ExitStatus
	waitErr  error

	mu       sync.Mutex // serialises KillTree, Close and reaping
	closed   bool
	warnings []failure.Warning
	sys      sysProcess // OS-specific state (job handle, launch token)
}

// Pid returns the child's process ID (the process group ID on POSIX).
func (p *Process) Pid() int { return p.root.Pid }

// Stdout returns the read end of the child's stdout pipe, which the caller
// owns. Not tied to Wait: a grandchild holding the write end can delay its
// EOF but never Wait.
func (p *Process) Stdout() io.ReadCloser { return p.stdout }

// Stderr returns the read end of the child's stderr pipe, like Stdout.
func (p *Process) Stderr() io.ReadCloser { return p.stderr }

// Warnings returns what the launch had to give up on (the Warn codes).
func (p *Process) Warnings() []failure.Warning {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]failure.Warning(nil), p.warnings...)
}

// Wait waits for the direct child to exit (never for the pipes or
// descendants) and returns how it ended, the same to every call; the error
// is for a failed wait (failure.Process), not a non-zero exit. The launch
// guard reaps the child and sends every group signal itself, so none races
// with the reaping; without a guard the child stays a zombie until Close,
// so its PID, the group ID, cannot be reused while KillTree may signal it.
func (p *Process) Wait() (ExitStatus, error) {
	p.waitOnce.Do(func() {
		p.status, p.waitErr = p.waitExit()
		close(p.waitDone)
	})
	<-p.waitDone
	return p.status, p.waitErr
}

// Exited returns a channel closed once some Wait (or Close) saw the exit.
func (p *Process) Exited() <-chan struct{} { return p.waitDone }

// Terminate asks the whole tree to stop. POSIX: SIGTERM, then SIGCONT so
// stopped members can act on it, to the group. Windows: a CTRL_BREAK_EVENT
// to the child's group, which reaches it only when it shares this
// process's console. An error wrapping os.ErrProcessDone means nothing was
// left to ask.
func (p *Process) Terminate() error { return p.terminate() }

// KillTree kills the child and every descendant it can identify; again, it
// repeats the sweep. POSIX: descendants by parent chain (setsid escapees
// included) and the orphans the launch guard adopted for the tree, each
// checked by PID and start time, are frozen, then SIGKILLed with the group.
// Windows: TerminateJobObject; without a job, taskkill /T /F by absolute
// path while the root lives, then a tree walk with creation-time checks.
func (p *Process) KillTree() (KillReport, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killTree()
}

// Close kills whatever is left of the tree (like closing a kill-on-close
// job), waits for and reaps the direct child, and releases every handle and
// pipe end; it is idempotent. POSIX: after the child exited by itself, the
// sweep runs only if something may be left (an orphan the guard adopted, a
// group member), so a clean run reads no process table.
func (p *Process) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	exited := p.exited() // by itself, before Close: see closeKill, closeSweep
	killErr := p.closeKill(exited)
	p.mu.Unlock()

	_, waitErr := p.Wait()
	p.mu.Lock()
	reapErr := p.release()
	if err := p.closeSweep(exited); err != nil {
		killErr = err
	}
	p.mu.Unlock()
	p.closePipes()
	return errors.Join(killErr, waitErr, reapErr)
}

func (p *Process) exited() bool {
	select {
	case <-p.waitDone:
		return true
	default:
		return false
	}
}

// Start validates plan and opts, then starts plan without a shell or PATH
// lookup (plan.Program must be absolute), in a new process group (POSIX) or
// a kill-on-close job (Windows). ctx bounds only the start; then stopping
// the child is the caller's job (Terminate, KillTree, Close). Errors:
// failure.Input for a bad plan or options (nothing started),
// failure.MissingCLI for a missing program (errors.Is fs.ErrNotExist too),
// failure.Setup when it cannot be executed, failure.Process otherwise.
func Start(ctx context.Context, plan shim.Command, opts Options) (*Process, error) {
	p, cmd, err := prepare(ctx, plan, opts)
	if err != nil {
		return nil, err
	}
	if err := p.start(ctx, cmd, plan, opts.Stdin); err != nil {
		return nil, err
	}
	return p, nil
}

// prepare validates Start's plan and options: the Process and its command.
func prepare(ctx context.Context, plan shim.Command, opts Options) (*Process, *exec.Cmd, error) {
	if err := cancelledBeforeStart(ctx); err != nil {
		return nil, nil, err
	}
	if plan.Program == "" {
		return nil, nil, failure.New(failure.Input, "launch plan has no program")
	}
	if !filepath.IsAbs(plan.Program) {
		// os/exec would resolve it against Dir, these checks against the cwd.
		return nil, nil, failure.New(failure.Input, "launch plan program %q is not an absolute path", plan.Program)
	}
	if opts.Dir != "" {
		info, err := os.Stat(opts.Dir)
		if err != nil {
			return nil, nil, failure.Wrap(failure.Input, err, "working directory is not usable")
		}
		if !info.IsDir() {
			return nil, nil, failure.New(failure.Input, "working directory %q is not a directory", opts.Dir)
		}
	}
	if info, err := os.Stat(plan.Program); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, failure.Wrap(failure.MissingCLI, err, "program not found")
		}
		return nil, nil, failure.Wrap(failure.Setup, err, "program cannot be inspected")
	} else if info.IsDir() {
		return nil, nil, failure.New(failure.Setup, "program %q is a directory", plan.Program)
	}
	args := plan.Args
	if len(args) == 0 {
		args = []string{plan.Program}
	}
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	env = childenv.Clean(env)
	p := &Process{waitDone: make(chan struct{})}
	return p, &exec.Cmd{Path: plan.Program, Args: args, Env: env, Dir: opts.Dir}, nil
}

// stdioPipes creates the three pipes, keeps our ends in p, returns the child's.
func (p *Process) stdioPipes() (child [3]*os.File, err error) {
	var ours [3]*os.File
	for i, name := range [3]string{"stdin", "stdout", "stderr"} {
		r, w, err := os.Pipe()
		if err != nil {
			closeFiles(child[:i]...)
			closeFiles(ours[:i]...)
			return [3]*os.File{}, failure.Wrap(failure.Resource, err, "cannot create %s pipe", name)
		}
		if i == 0 {
			child[i], ours[i] = r, w
		} else {
			child[i], ours[i] = w, r
		}
	}
	p.stdin, p.stdout, p.stderr = ours[0], ours[1], ours[2]
	return child, nil
}

func (p *Process) closePipes() { closeFiles(p.stdin, p.stdout, p.stderr) }

func closeFiles(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// cancelledBeforeStart is a start's error once ctx ended, nil while it lives.
func cancelledBeforeStart(ctx context.Context) error {
	return failure.Wrap(failure.Cancelled, ctx.Err(), "launch cancelled before start")
}

// feedStdin copies src to the child's stdin and closes it. Write errors end
// the copy silently: whether the child read it is the caller's verdict.
func (p *Process) feedStdin(src io.Reader) {
	w := p.stdin
	if src == nil {
		w.Close()
		return
	}
	go func() {
		_, _ = io.Copy(w, src)
		w.Close()
	}()
}

// startError classifies an exec start failure; nil for nil.
func startError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return failure.Wrap(failure.MissingCLI, err, "program not found")
	case errors.Is(err, fs.ErrPermission):
		return failure.Wrap(failure.Setup, err, "program cannot be executed")
	}
	return failure.Wrap(failure.Process, err, "program could not be started")
}
