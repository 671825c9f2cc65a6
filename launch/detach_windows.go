package launch

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/procid"
	"github.com/cursorkit/cursorkit/shim"
)

// startDetached starts cmd without a console in a new process group,
// breaking away from this process's job when it may.
func startDetached(_ context.Context, cmd *exec.Cmd, plan shim.Command) (Detached, error) {
	breakaway, forbidden := breakawayFlag()
	flags := windows.DETACHED_PROCESS | windows.CREATE_NEW_PROCESS_GROUP | breakaway
	var warnings []failure.Warning
	if forbidden {
		warnings = append(warnings, warning(WarnNoBreakaway))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: plan.CommandLine, CreationFlags: flags}
	err := cmd.Start()
	if err != nil && flags&windows.CREATE_BREAKAWAY_FROM_JOB != 0 && errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		// The job allowed breakaway, CreateProcess refused: start inside it.
		retry := exec.Cmd{Path: cmd.Path, Args: cmd.Args, Env: cmd.Env, Dir: cmd.Dir,
			Stdin: cmd.Stdin, Stdout: cmd.Stdout, Stderr: cmd.Stderr,
			SysProcAttr: &syscall.SysProcAttr{CmdLine: plan.CommandLine, CreationFlags: flags &^ windows.CREATE_BREAKAWAY_FROM_JOB}}
		cmd = &retry
		err = cmd.Start()
		warnings = append(warnings, warning(WarnNoBreakaway))
	}
	if err != nil {
		return Detached{}, startError(err)
	}
	var id procid.Identity
	var idErr error
	herr := cmd.Process.WithHandle(func(h uintptr) { id, idErr = procid.OfHandle(windows.Handle(h)) })
	_ = cmd.Process.Release()
	if herr != nil || idErr != nil {
		return Detached{Identity: procid.Identity{PID: cmd.Process.Pid}, Warnings: warnings}, errors.Join(herr, idErr)
	}
	return Detached{Identity: id, Warnings: warnings}, nil
}

// breakawayFlag returns the creation flag a child needs to leave this
// process's job: CREATE_BREAKAWAY_FROM_JOB when the job allows it, 0 when
// there is no job or it lets children out by itself; forbidden reports a
// job that keeps its children. A job that cannot be queried is taken to
// allow breakaway (StartDetached retries without it if CreateProcess
// refuses).
func breakawayFlag() (flag uint32, forbidden bool) {
	isProcessInJob := windows.NewLazySystemDLL("kernel32.dll").NewProc("IsProcessInJob")
	var inJob int32
	if isProcessInJob.Find() == nil {
		if r, _, _ := isProcessInJob.Call(uintptr(windows.CurrentProcess()), 0, uintptr(unsafe.Pointer(&inJob))); r != 0 && inJob == 0 {
			return 0, false // not in a job: nothing to leave
		}
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	if err := windows.QueryInformationJobObject(0, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil); err != nil {
		return windows.CREATE_BREAKAWAY_FROM_JOB, false
	}
	switch limits := info.BasicLimitInformation.LimitFlags; {
	case limits&windows.JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK != 0:
		return 0, false
	case limits&windows.JOB_OBJECT_LIMIT_BREAKAWAY_OK != 0:
		return windows.CREATE_BREAKAWAY_FROM_JOB, false
	}
	return 0, true
}
