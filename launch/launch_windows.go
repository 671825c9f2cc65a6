package launch

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/childenv"
	"github.com/cursorkit/cursorkit/shim"
)

// taskkillTimeout bounds the taskkill fallback.
const taskkillTimeout = 10 * time.Second

type sysProcess struct {
	job     windows.Handle // 0 without a job, and once Close released it
	jobbed  bool           // the tree ran in a job: once released, nothing is left
	process windows.Handle // held until Close, so KillTree never meets its PID reused
	// Tests only: afterCreate runs with the PID of the child created
	// suspended, before its job assignment and resume; noJobList takes
	// the fallback of Windows before 10 1607.
	afterCreate func(pid int)
	noJobList   bool
}

// start creates the child suspended and inside its kill-on-close job at
// once (PROC_THREAD_ATTRIBUTE_JOB_LIST), then resumes it: from the instant
// the child exists, closing the job's handle, which this process's death
// does, kills it, so no kill of this program at any point leaves a child
// outside a job. See joinJobAfterCreate for where that cannot be.
func (p *Process) start(ctx context.Context, cmd *exec.Cmd, plan shim.Command, stdin io.Reader) error {
	job, err := newKillOnCloseJob()
	if err != nil {
		return failure.Wrap(failure.Process, err, "cannot create a job object")
	}
	c, err := p.createSuspended(ctx, cmd, plan, job)
	if err != nil {
		windows.CloseHandle(job)
		return err
	}
	// Resumed only once it is in its job, or known to run without one.
	job, err = p.joinJobAfterCreate(job, c)
	if err == nil {
		if _, rerr := windows.ResumeThread(c.Thread); rerr != nil {
			err = failure.Wrap(failure.Process, os.NewSyscallError("ResumeThread", rerr), "cannot resume the child")
		}
	}
	windows.CloseHandle(c.Thread)
	if err != nil {
		p.abandon(c, job)
		return err
	}
	p.sys.process = c.Process
	p.sys.job, p.sys.jobbed = job, job != 0
	p.feedStdin(stdin)
	return nil
}

// createSuspended creates the child suspended, in job where the system
// allows it. A failure leaves nothing behind but job, the caller's.
func (p *Process) createSuspended(ctx context.Context, cmd *exec.Cmd, plan shim.Command, job windows.Handle) (created, error) {
	flags := uint32(windows.CREATE_NEW_PROCESS_GROUP)
	if !hasConsole() {
		// With a console the child shares it, so Terminate's
		// CTRL_BREAK_EVENT reaches it; without one, open no window.
		flags |= windows.CREATE_NO_WINDOW
	}
	child, err := p.stdioPipes()
	if err != nil {
		return created{}, err
	}
	if err := cancelledBeforeStart(ctx); err != nil {
		closeFiles(child[:]...)
		p.closePipes()
		return created{}, err
	}
	cmdLine := plan.CommandLine
	if cmdLine == "" {
		cmdLine = windows.ComposeCommandLine(cmd.Args)
	}
	c, err := createProcess(createSpec{
		program: cmd.Path, cmdLine: cmdLine, env: cmd.Environ(), dir: cmd.Dir, flags: flags,
		stdio: [3]uintptr{child[0].Fd(), child[1].Fd(), child[2].Fd()},
		job:   job, noJobList: p.sys.noJobList,
	})
	closeFiles(child[:]...)
	if err != nil {
		p.closePipes()
		return created{}, startError(err)
	}
	p.root = proc{Pid: int(c.ProcessId), PPid: os.Getpid(), StartTime: creationTime(c.Process)}
	if p.sys.afterCreate != nil {
		p.sys.afterCreate(int(c.ProcessId))
	}
	return c, nil
}

// joinJobAfterCreate is the fallback for a child created outside its job
// (no PROC_THREAD_ATTRIBUTE_JOB_LIST): it assigns the still suspended child
// and records WarnJobAfterStart. It returns the child's job, 0 when nested
// jobs are refused (before Windows 8, or a job that forbids it): the job is
// closed and the child runs without one rather than not at all (WarnNoJob).
func (p *Process) joinJobAfterCreate(job windows.Handle, c created) (windows.Handle, error) {
	if c.inJob {
		return job, nil
	}
	err := windows.AssignProcessToJobObject(job, c.Process)
	switch {
	case err == nil:
		p.warnings = append(p.warnings, warning(WarnJobAfterStart))
	case errors.Is(err, windows.ERROR_ACCESS_DENIED):
		windows.CloseHandle(job)
		p.warnings = append(p.warnings, warning(WarnNoJob))
		return 0, nil
	}
	return job, failure.Wrap(failure.Process, err, "cannot assign the child to its job object")
}

// abandon kills a child that could not be set up (never left suspended or
// loose), waits for it, and releases its handle, our pipe ends and job.
func (p *Process) abandon(c created, job windows.Handle) {
	_ = windows.TerminateProcess(c.Process, 1)
	_, _ = windows.WaitForSingleObject(c.Process, windows.INFINITE)
	windows.CloseHandle(c.Process)
	p.closePipes()
	if job != 0 {
		windows.CloseHandle(job)
	}
}

// newKillOnCloseJob creates an unnamed, non-inheritable job whose members
// all die when its last handle closes, and which no member may leave.
func newKillOnCloseJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, err
	}
	return job, nil
}

// hasConsole reports whether this process is attached to a console.
func hasConsole() bool {
	proc := windows.NewLazySystemDLL("kernel32.dll").NewProc("GetConsoleWindow")
	if proc.Find() != nil {
		return false
	}
	hwnd, _, _ := proc.Call()
	return hwnd != 0
}

// creationTime returns a process's creation time in FILETIME ticks, or 0.
func creationTime(h windows.Handle) uint64 {
	var created, exited, kernel, user windows.Filetime
	if windows.GetProcessTimes(h, &created, &exited, &kernel, &user) != nil {
		return 0
	}
	return uint64(created.HighDateTime)<<32 | uint64(created.LowDateTime)
}

func (p *Process) waitExit() (ExitStatus, error) {
	ev, err := windows.WaitForSingleObject(p.sys.process, windows.INFINITE)
	if ev != windows.WAIT_OBJECT_0 {
		if err == nil {
			err = errors.New("unexpected wait result")
		}
		return ExitStatus{}, failure.Wrap(failure.Process, err, "cannot wait for the child")
	}
	var code uint32
	if err := windows.GetExitCodeProcess(p.sys.process, &code); err != nil {
		return ExitStatus{}, failure.Wrap(failure.Process, err, "cannot read the child's exit code")
	}
	return ExitStatus{Code: int(code)}, nil
}

// release closes the child's and the job's handles once Close waited.
func (p *Process) release() error {
	var err error
	if p.sys.process != 0 {
		err = windows.CloseHandle(p.sys.process)
		p.sys.process = 0
	}
	if p.sys.job != 0 {
		err = errors.Join(err, windows.CloseHandle(p.sys.job))
		p.sys.job = 0
	}
	return failure.Wrap(failure.Process, err, "cannot close the child's handles")
}

func (p *Process) terminate() error {
	if p.exited() {
		return failure.Wrap(failure.Process, os.ErrProcessDone, "process has exited")
	}
	err := windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(p.root.Pid))
	return failure.Wrap(failure.Process, err, "cannot send CTRL_BREAK_EVENT")
}

// closeKill is Close's tree kill, with p.mu held, whether or not the child
// exited by itself: a dead child's job can still hold descendants.
func (p *Process) closeKill(bool) error {
	_, err := p.killTree()
	return err
}

func (p *Process) closeSweep(bool) error { return nil }

// killTree runs with p.mu held.
func (p *Process) killTree() (KillReport, error) {
	if p.sys.job != 0 {
		err := windows.TerminateJobObject(p.sys.job, 1)
		return KillReport{Method: MethodJobObject, Group: err == nil}, failure.Wrap(failure.Process, err, "cannot terminate the job object")
	}
	if p.sys.jobbed {
		// Close terminated and released the job: nothing of ours is left.
		return KillReport{Method: MethodJobObject}, nil
	}
	return p.killTreeWithoutJob(true)
}

// killTreeWithoutJob pins the descendants found by one snapshot (an open
// handle keeps a PID from being reused), runs taskkill /T (when
// useTaskkill) while the root lives so it can walk the tree, then
// terminates the pinned descendants and the root.
func (p *Process) killTreeWithoutJob(useTaskkill bool) (KillReport, error) {
	report := KillReport{Method: MethodTreeWalk}
	var errs []error
	table, err := snapshot()
	if err != nil {
		errs = append(errs, failure.Wrap(failure.Process, err, "cannot snapshot the process table"))
	}
	var pins []windows.Handle
	for _, d := range descendants(p.root, table) {
		h, err := windows.OpenProcess(windows.PROCESS_TERMINATE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(d.Pid))
		if err != nil {
			continue
		}
		if creationTime(h) != d.StartTime {
			report.Skipped++
			windows.CloseHandle(h)
			continue
		}
		pins = append(pins, h)
	}
	if useTaskkill && !p.exited() {
		if err := taskkillTree(p.root.Pid); err == nil {
			report.Group = true
		}
	}
	for _, h := range pins {
		if windows.TerminateProcess(h, 1) == nil {
			report.Swept++
		}
		windows.CloseHandle(h)
	}
	if h := p.sys.process; h != 0 {
		// (0 once Close waited for the child.) TerminateProcess of an
		// exited child fails (ERROR_ACCESS_DENIED): no error here.
		if err := windows.TerminateProcess(h, 1); err != nil && !processExited(h) {
			errs = append(errs, failure.Wrap(failure.Process, err, "cannot kill the child"))
		}
	}
	return report, errors.Join(errs...)
}

// processExited reports whether the process behind h has exited.
func processExited(h windows.Handle) bool {
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == windows.WAIT_OBJECT_0
}

// taskkillTree runs %SystemRoot%\System32\taskkill.exe /T /F /PID pid, by
// absolute path so PATH cannot substitute another program.
func taskkillTree(pid int) error {
	root := os.Getenv("SystemRoot")
	if root == "" {
		root = `C:\Windows`
	}
	ctx, cancel := context.WithTimeout(context.Background(), taskkillTimeout)
	defer cancel()
	tk := filepath.Join(root, "System32", "taskkill.exe")
	cmd := exec.CommandContext(ctx, tk, "/T", "/F", "/PID", strconv.Itoa(pid))
	cmd.Env = childenv.Clean(os.Environ())
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NO_WINDOW}
	return cmd.Run()
}

// snapshot reads the process table with one Toolhelp32 snapshot and each
// process's creation time (0 when it cannot be opened).
func snapshot() ([]proc, error) {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return nil, err
	}
	defer windows.CloseHandle(snap)
	var table []proc
	var entry windows.ProcessEntry32
	entry.Size = uint32(unsafe.Sizeof(entry))
	for err = windows.Process32First(snap, &entry); err == nil; err = windows.Process32Next(snap, &entry) {
		e := proc{Pid: int(entry.ProcessID), PPid: int(entry.ParentProcessID)}
		if h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, entry.ProcessID); err == nil {
			e.StartTime = creationTime(h)
			windows.CloseHandle(h)
		}
		table = append(table, e)
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return table, err
	}
	return table, nil
}
