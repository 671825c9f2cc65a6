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
}

func (p *Process) start(ctx context.Context, cmd *exec.Cmd, plan shim.Plan, stdin io.Reader) error {
	job, err := newKillOnCloseJob()
	if err != nil {
		return failure.Wrap(failure.Process, err, "cannot create a job object")
	}
	flags := uint32(windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP)
	if !hasConsole() {
		// With a console the child shares it, which is what lets
		// Terminate's CTRL_BREAK_EVENT reach it; without one, do not
		// open a window.
		flags |= windows.CREATE_NO_WINDOW
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: plan.CommandLine, CreationFlags: flags}
	afterStart, onFailure, err := p.pipes(cmd)
	if err != nil {
		windows.CloseHandle(job)
		return err
	}
	if err := ctx.Err(); err != nil {
		onFailure()
		windows.CloseHandle(job)
		return failure.Wrap(failure.Cancelled, err, "launch cancelled before start")
	}
	if err := cmd.Start(); err != nil {
		onFailure()
		windows.CloseHandle(job)
		return startError(err)
	}
	afterStart()
	p.cmd = cmd
	p.root = proc{Pid: cmd.Process.Pid, PPid: os.Getpid()}

	var assignErr, resumeErr error
	herr := cmd.Process.WithHandle(func(h uintptr) {
		handle := windows.Handle(h)
		p.root.StartTime = creationTime(handle)
		assignErr = windows.AssignProcessToJobObject(job, handle)
		if assignErr != nil && errors.Is(assignErr, windows.ERROR_ACCESS_DENIED) {
			// Nested jobs refused (before Windows 8, or a job that
			// forbids it): run without a job rather than not at all.
			windows.CloseHandle(job)
			job = 0
			assignErr = nil
			p.warnings = append(p.warnings, WarningNoJob)
		}
		if assignErr == nil {
			resumeErr = resumeProcess(handle)
		}
		if assignErr != nil || resumeErr != nil {
			// Never leave the child suspended or loose.
			_ = windows.TerminateProcess(handle, 1)
		}
	})
	if herr == nil && assignErr == nil && resumeErr == nil {
		p.sys.job, p.sys.jobbed = job, job != 0
		p.feedStdin(stdin)
		return nil
	}
	if herr != nil {
		_ = cmd.Process.Kill()
	}
	_ = cmd.Wait()
	if job != 0 {
		windows.CloseHandle(job)
	}
	p.stdin.Close()
	p.stdout.Close()
	p.stderr.Close()
	switch {
	case herr != nil:
		return failure.Wrap(failure.Process, herr, "cannot reach the started child")
	case assignErr != nil:
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

// resumeProcess resumes every thread of a process started suspended. Go
// closes the main thread's handle after CreateProcess, so ResumeThread on it
// is impossible; NtResumeProcess needs only the process handle.
func resumeProcess(h windows.Handle) error {
	proc := windows.NewLazySystemDLL("ntdll.dll").NewProc("NtResumeProcess")
	if err := proc.Find(); err != nil {
		return err
	}
	status, _, _ := proc.Call(uintptr(h))
	if status != 0 {
		return windows.NTStatus(status)
	}
	return nil
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
	err := p.cmd.Wait()
	if p.cmd.ProcessState != nil {
		return ExitStatus{Code: p.cmd.ProcessState.ExitCode()}, nil
	}
	return ExitStatus{}, failure.Wrap(failure.Process, err, "cannot wait for the child")
}

// release closes the job handle; Close has already terminated the job.
func (p *Process) release() error {
	if p.sys.job == 0 {
		return nil
	}
	err := windows.CloseHandle(p.sys.job)
	p.sys.job = 0
	return failure.Wrap(failure.Process, err, "cannot close the job object")
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
	if err := p.cmd.Process.Kill(); err != nil && !rootGone(err) {
		errs = append(errs, failure.Wrap(failure.Process, err, "cannot kill the child"))
	}
	return report, errors.Join(errs...)
}

// rootGone reports whether os.Process.Kill failed only because the child
// is already reaped: os.ErrProcessDone, or EINVAL, which Windows' Kill
// returns once Wait has released the process handle (launch never calls
// Release itself, so EINVAL means exactly that).
func rootGone(err error) bool {
	return errors.Is(err, os.ErrProcessDone) || errors.Is(err, syscall.EINVAL)
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
