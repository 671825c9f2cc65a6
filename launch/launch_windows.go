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

// sysProcess is the Windows-specific state of a Process.
type sysProcess struct {
	job windows.Handle // 0 without a job, and once Close released it
	// jobbed records that the tree ran in a job: once Close terminated
	// and released it, nothing of the tree is left to kill.
	jobbed bool
	// process is the child's handle from CreateProcess, held until Close
	// (so its PID cannot be reused while KillTree may still use it); 0
	// once released.
	process windows.Handle
	// afterCreate, set by tests only (export_windows_test.go), runs with
	// the child's PID right after CreateProcess created it, suspended:
	// before it is resumed, and in the fallback before its job assignment.
	afterCreate func(pid int)
	// noJobList makes start take the fallback of Windows before 10 1607
	// (tests only).
	noJobList bool
}

// start creates the child suspended and inside its kill-on-close job at
// once (PROC_THREAD_ATTRIBUTE_JOB_LIST), then resumes it: from the instant
// the child exists, closing the job's handle, which this process's death
// does, kills it, so no kill of this program at any point leaves a child
// outside a job. Where the job list is unsupported (before Windows 10 1607)
// the child is assigned to the job after CreateProcess, before it runs, and
// the launch records WarnJobAfterStart; where the job is refused
// (nesting forbidden) the child runs without a job (WarnNoJob).
func (p *Process) start(ctx context.Context, cmd *exec.Cmd, plan shim.Command, stdin io.Reader) error {
	job, err := newKillOnCloseJob()
	if err != nil {
		return failure.Wrap(failure.Process, err, "cannot create a job object")
	}
	flags := uint32(windows.CREATE_NEW_PROCESS_GROUP)
	if !hasConsole() {
		// With a console the child shares it, which is what lets
		// Terminate's CTRL_BREAK_EVENT reach it; without one, do not
		// open a window.
		flags |= windows.CREATE_NO_WINDOW
	}
	child, err := p.stdioPipes()
	if err != nil {
		windows.CloseHandle(job)
		return err
	}
	failed := func() {
		closeFiles(p.stdin, p.stdout, p.stderr)
		if job != 0 {
			windows.CloseHandle(job)
		}
	}
	if err := ctx.Err(); err != nil {
		closeFiles(child[:]...)
		failed()
		return failure.Wrap(failure.Cancelled, err, "launch cancelled before start")
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
		failed()
		return startError(err)
	}
	p.root = proc{Pid: c.pid, PPid: os.Getpid(), StartTime: creationTime(c.process)}
	if p.sys.afterCreate != nil {
		p.sys.afterCreate(c.pid)
	}

	var assignErr, resumeErr error
	if !c.inJob {
		assignErr = windows.AssignProcessToJobObject(job, c.process)
		switch {
		case assignErr == nil:
			p.warnings = append(p.warnings, warning(WarnJobAfterStart))
		case errors.Is(assignErr, windows.ERROR_ACCESS_DENIED):
			// Nested jobs refused (before Windows 8, or a job that
			// forbids it): run without a job rather than not at all.
			windows.CloseHandle(job)
			job = 0
			assignErr = nil
			p.warnings = append(p.warnings, warning(WarnNoJob))
		}
	}
	if assignErr == nil {
		if _, err := windows.ResumeThread(c.thread); err != nil {
			resumeErr = os.NewSyscallError("ResumeThread", err)
		}
	}
	windows.CloseHandle(c.thread)
	if assignErr == nil && resumeErr == nil {
		p.sys.process = c.process
		p.sys.job, p.sys.jobbed = job, job != 0
		p.feedStdin(stdin)
		return nil
	}
	// Never leave the child suspended or loose.
	_ = windows.TerminateProcess(c.process, 1)
	_, _ = windows.WaitForSingleObject(c.process, windows.INFINITE)
	windows.CloseHandle(c.process)
	failed()
	if assignErr != nil {
		return failure.Wrap(failure.Process, assignErr, "cannot assign the child to its job object")
	}
	return failure.Wrap(failure.Process, resumeErr, "cannot resume the child")
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

// creationTime returns a process's creation time as FILETIME ticks, 0 when
// it cannot be read.
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

// release closes the child's handle and the job's; Close has already
// terminated the job and waited for the child.
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
	if err := windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(p.root.Pid)); err != nil {
		return failure.Wrap(failure.Process, err, "cannot send CTRL_BREAK_EVENT")
	}
	return nil
}

// closeKill is Close's tree kill before the child is reaped, with p.mu
// held: the job is terminated (or the tree walked) whether or not the child
// exited by itself, since a dead child's job can still hold descendants.
func (p *Process) closeKill(bool) error {
	_, err := p.killTree()
	return err
}

// closeSweep has nothing left to do: closeKill did it all.
func (p *Process) closeSweep(bool) error { return nil }

// killTree runs with p.mu held.
func (p *Process) killTree() (KillReport, error) {
	if p.sys.job != 0 {
		report := KillReport{Method: MethodJobObject}
		if err := windows.TerminateJobObject(p.sys.job, 1); err != nil {
			return report, failure.Wrap(failure.Process, err, "cannot terminate the job object")
		}
		report.Group = true
		return report, nil
	}
	if p.sys.jobbed {
		// Close terminated the job and released it: its kill-on-close
		// limit took every member, so a walk would find nothing of ours.
		return KillReport{Method: MethodJobObject}, nil
	}
	return p.killTreeWithoutJob(true)
}

// killTreeWithoutJob pins the descendants found by one snapshot (an open
// handle keeps a PID from being reused), runs taskkill /T (when useTaskkill)
// while the root is still alive so it can still walk the tree, then
// terminates the pinned descendants and finally the root.
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
		// Released (0) only after Close waited for the child: then
		// nothing is left to kill. TerminateProcess of a child that has
		// exited fails (ERROR_ACCESS_DENIED), which is no error here.
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
