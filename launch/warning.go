//go:build linux || windows

package launch

import "github.com/cursorkit/cursorkit/failure"

// warning is the warning of code, with its message for people. Only Linux
// (the guard) and Windows (the job) have a protection that can be missing.
func warning(code string) failure.Warning {
	var msg string
	switch code {
	case WarnNoJob:
		msg = "no job object (nested job refused): using taskkill and a tree walk"
	case WarnJobAfterStart:
		msg = "the child was put in its job after it was created (no PROC_THREAD_ATTRIBUTE_JOB_LIST before Windows 10 1607)"
	case WarnNoGuard:
		msg = "the launch guard could not start: a descendant that leaves the process group, or the tree after a SIGKILL of this program, may survive a stop"
	case WarnNoSubreaper:
		msg = "the launch guard is not a child subreaper: orphaned descendants may survive a stop"
	case WarnNoBreakaway:
		msg = "this process's job object forbids breakaway: the detached child dies with it"
	}
	return failure.Warning{Code: code, Message: msg}
}
