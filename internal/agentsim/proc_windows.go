package agentsim

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// escapeAttr asks for a worker outside the simulator's Job Object; a job
// without JOB_OBJECT_LIMIT_BREAKAWAY_OK refuses, which is what a supervisor
// wants.
func escapeAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_BREAKAWAY_FROM_JOB | windows.CREATE_NEW_PROCESS_GROUP}
}

// ignoreSIGTERM does nothing: Windows has no SIGTERM to ignore; a Job
// Object or TerminateProcess stop cannot be refused.
func ignoreSIGTERM() {}
