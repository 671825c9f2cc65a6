// Package launch starts a shim.Command as a supervised child and kills its whole
// process tree on request, on every OS.
//
// POSIX: no shell, a new process group, explicit environment and working
// directory, and stdin a pipe (the prompt travels only there, never in argv or
// the environment). Windows: a kill-on-close Job Object without breakaway; the
// child is created suspended in a new process group already inside the job
// (PROC_THREAD_ATTRIBUTE_JOB_LIST; before Windows 10 1607 it is assigned
// right after CreateProcess) and only then resumed, so no grandchild can
// start outside the job, and a kill of this program at any point takes it.
//
// KillTree finds descendants that left the group (setsid) by parent chain in
// process-table snapshots, checking PID and start time before any signal.
//
// Linux: the child is started by the launch guard, this program's binary
// run again as a small child subreaper that every launch of the program
// shares (docs/architecture.md "The launch guard"). Every orphan of the
// tree is reparented to it, so double-forked daemons are killed with their
// tree whatever they did to their environment, and when this program dies
// in any way, SIGKILL included, the guard kills every tree it holds. The
// guard runs from this package's init, before main, when the binary is
// executed as one: any program that imports launch carries it.
//
// Launch never reads the child's output and never decides a verdict: the
// caller (package supervise) owns the pipes' read ends, deadlines and the
// graceful-then-forceful stop sequence built from Terminate and KillTree.
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
	// Dir is the child's working directory. Empty means the current
	// directory; a Dir that is missing or not a directory is a failure.Input
	// error returned before anything starts.
	Dir string
	// Env is the child's full environment. Nil means os.Environ(); an empty
	// non-nil slice means an empty environment. Either way cursorkit's own
	// secrets (childenv.Secrets: CURSORKIT_TOKEN) are removed: no child
	// inherits them (docs/contract.md, "Security"). On Linux, Start adds one
	// variable, LaunchIDEnv, holding a random token that tells the launch
	// guard which tree an orphan it adopts belongs to (a value inherited
	// from an outer cursorkit is kept, the new token appended).
	Env []string
	// Stdin is copied to the child's stdin pipe, which is then closed: the
	// prompt travels only here. Nil closes the child's stdin at once. The
	// copy runs in its own goroutine; it ends when Stdin returns EOF or an
	// error, or when a write fails because the child closed its end or Close
	// was called (a Stdin blocked in Read keeps that goroutine until the
	// Read returns, as with os/exec).
	Stdin io.Reader
}

// LaunchIDEnv names the variable Start adds to the child's environment on
// Linux. Its value is a comma-separated list of random tokens, the last one
// specific to one Process (earlier ones come from outer cursorkit
// processes); it carries no other information.
const LaunchIDEnv = "CURSORKIT_LAUNCH_ID"

// ExitStatus is how the direct child ended.
type ExitStatus struct {
	// Code is the exit code; -1 when the child was killed by a signal.
	Code int `json:"code"`
	// Signal is the signal number that killed the child (POSIX), else 0.
	Signal int `json:"signal,omitempty"`
	// Signaled reports whether a signal ended the child (POSIX only).
	Signaled bool `json:"signaled,omitempty"`
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

// The codes of the warnings a launch records (Process.Warnings,
// Detached.Warnings).
const (
	// WarnNoJob (Windows): the child could not be put in a job object, so
	// KillTree falls back to MethodTreeWalk.
	WarnNoJob = "no_job_object"
	// WarnJobAfterStart (Windows before 10 1607, without
	// PROC_THREAD_ATTRIBUTE_JOB_LIST): the child was put in its job after
	// it was created; had this program been killed in between, it would
	// have stayed outside any job.
	WarnJobAfterStart = "job_after_start"
	// WarnNoGuard (Linux): the launch guard could not be started, so the
	// child is this program's own: a descendant that leaves the process
	// group and outlives its parent, or the whole tree after a SIGKILL of
	// this program, may survive a stop.
	WarnNoGuard = "no_guard"
	// WarnNoSubreaper (Linux): the guard is not a child subreaper, so
	// orphaned descendants are not reparented to it and may survive a
	// stop.
	WarnNoSubreaper = "no_subreaper"
	// WarnNoBreakaway (Windows): this process's job object forbids
	// breakaway, so a detached child dies with it.
	WarnNoBreakaway = "no_breakaway"
)

// KillReport says what KillTree did.
type KillReport struct {
	// Method is one of the Method constants.
	Method string `json:"method"`
	// Group reports that the process group (POSIX) or the job (Windows) was
	// signalled or terminated.
	Group bool `json:"group"`
	// Swept counts descendants killed individually by the sweep, beyond the
	// group or job.
	Swept int `json:"swept"`
	// Reaped counts orphans of the tree reparented to the launch guard
	// (Linux) that KillTree killed and the guard reaped.
	Reaped int `json:"reaped,omitempty"`
	// Skipped counts candidates left alone because their identity (PID and
	// start time) could not be confirmed, so a reused PID is never hit.
	Skipped int `json:"skipped,omitempty"`
}

// Process is a started plan. Its methods are safe for concurrent use, except
// that the read ends returned by Stdout and Stderr follow the usual rules of
// *os.File.
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

// Stdout returns the read end of the child's stdout pipe. The caller owns
// it: read it until EOF or close it to stop reading. Because it is a plain
// pipe and not tied to Wait, a grandchild holding the write end can delay its
// EOF but never Wait.
func (p *Process) Stdout() io.ReadCloser { return p.stdout }

// Stderr returns the read end of the child's stderr pipe, with the same
// ownership rules as Stdout.
func (p *Process) Stderr() io.ReadCloser { return p.stderr }

// Warnings returns what the launch had to give up on (the Warn codes).
func (p *Process) Warnings() []failure.Warning {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]failure.Warning(nil), p.warnings...)
}

// Wait waits for the direct child to exit and returns how it ended. It never
// waits for the pipes or for descendants. A non-zero exit is not an error:
// the error is non-nil only when waiting itself failed (failure.Process).
// Wait may be called more than once and from several goroutines; every call
// returns the same result. On Linux the launch guard reaps the child and
// sends every group signal itself, so none races with the reaping; without
// a guard the child stays unreaped (a zombie) until Close, so its PID, which
// is also the group ID, cannot be reused while KillTree may still signal
// the group.
func (p *Process) Wait() (ExitStatus, error) {
	p.waitOnce.Do(func() {
		p.status, p.waitErr = p.waitExit()
		close(p.waitDone)
	})
	<-p.waitDone
	return p.status, p.waitErr
}

// Exited returns a channel closed once Wait has observed the child's exit.
// It lets other goroutines select on the exit; it closes only after some
// goroutine has called Wait (or Close).
func (p *Process) Exited() <-chan struct{} { return p.waitDone }

// Terminate asks the whole tree to stop. POSIX: SIGTERM, then SIGCONT so
// stopped members can act on it, to the process group. Windows: a
// CTRL_BREAK_EVENT to the child's process group, which only reaches it when
// it shares this process's console (best effort). An error wrapping
// os.ErrProcessDone means nothing was left to ask.
func (p *Process) Terminate() error { return p.terminate() }

// KillTree forcefully kills the child and every descendant it can identify,
// and is idempotent: calling it again repeats the sweep, which is harmless.
// POSIX: descendants are found in a process-table snapshot by parent chain
// (so setsid escapees are included) and, on Linux, among the orphans the
// launch guard adopted (by the child's launch token, or by when they
// started); each is pinned by PID and start time (a pidfd on Linux) before
// any signal, so a reused PID is never hit. The group and the pinned
// victims are frozen with SIGSTOP and the table is read again until it
// shows no new victim (at most a few snapshots); then SIGKILL goes to the
// group, the root and each victim, and the guard reaps the orphans. The
// group is signalled only while its ID provably still names the child's
// group.
// Windows: TerminateJobObject; without a job, taskkill /T /F by absolute path
// while the root is still alive, then a native tree walk with creation-time
// checks.
func (p *Process) KillTree() (KillReport, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killTree()
}

// Close kills whatever is left of the tree (like closing a kill-on-close job),
// waits for the direct child, reaps it, and releases every handle: the job,
// the stdin write end and the read ends of stdout and stderr. It is
// idempotent. POSIX: when Wait had already seen the child exit by itself,
// Close runs KillTree's sweep only if something may be left (an orphan the
// launch guard adopted, on Linux, or a member of the process group), so
// closing after a clean run reads no process table; what a child left
// behind (a daemon) is killed.
func (p *Process) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	// Whether the child had exited by itself before Close decides how the
	// rest is killed (see closeKill and closeSweep).
	exited := p.exited()
	killErr := p.closeKill(exited)
	p.mu.Unlock()

	_, waitErr := p.Wait()
	p.mu.Lock()
	reapErr := p.release()
	if err := p.closeSweep(exited); err != nil {
		killErr = err
	}
	p.mu.Unlock()
	p.stdin.Close()
	p.stdout.Close()
	p.stderr.Close()
	return errors.Join(killErr, waitErr, reapErr)
}

// exited reports whether Wait has observed the child's exit.
func (p *Process) exited() bool {
	select {
	case <-p.waitDone:
		return true
	default:
		return false
	}
}

// Start validates plan and opts, then starts plan: without a shell, without
// any PATH lookup (plan.Program must be absolute), with opts.Env and
// opts.Dir, in a new process group (POSIX) or a kill-on-close job (Windows).
// ctx bounds only the start itself; once Start returns, stopping the child is
// the caller's job (Terminate, KillTree, Close). Errors: failure.Input for a
// bad plan or options (nothing started), failure.MissingCLI when the program
// file does not exist (errors.Is(err, fs.ErrNotExist) also holds),
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

// prepare is Start's validation: the Process to start and its command.
func prepare(ctx context.Context, plan shim.Command, opts Options) (*Process, *exec.Cmd, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, failure.Wrap(failure.Cancelled, err, "launch cancelled before start")
	}
	if plan.Program == "" {
		return nil, nil, failure.New(failure.Input, "launch plan has no program")
	}
	if !filepath.IsAbs(plan.Program) {
		// A relative Path would be resolved against Dir by os/exec but
		// checked against the current directory here; plans are absolute.
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

// stdioPipes creates the child's stdin, stdout and stderr pipes, keeps our
// ends in p and returns the child's.
func (p *Process) stdioPipes() (child [3]*os.File, err error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return child, failure.Wrap(failure.Resource, err, "cannot create stdin pipe")
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeFiles(inR, inW)
		return child, failure.Wrap(failure.Resource, err, "cannot create stdout pipe")
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeFiles(inR, inW, outR, outW)
		return child, failure.Wrap(failure.Resource, err, "cannot create stderr pipe")
	}
	p.stdin, p.stdout, p.stderr = inW, outR, errR
	return [3]*os.File{inR, outW, errW}, nil
}

func closeFiles(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// feedStdin copies src to the child's stdin and closes it. Write errors
// (the child closed its stdin, or Close closed our end) end the copy
// silently: whether the child read its input is the caller's verdict.
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

// startError classifies an exec start failure.
func startError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return failure.Wrap(failure.MissingCLI, err, "program not found")
	case errors.Is(err, fs.ErrPermission):
		return failure.Wrap(failure.Setup, err, "program cannot be executed")
	}
	return failure.Wrap(failure.Process, err, "program could not be started")
}
