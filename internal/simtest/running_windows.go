package simtest

import "golang.org/x/sys/windows"

// stillActive is GetExitCodeProcess's answer for a running process.
const stillActive = 259

// running reports whether pid is a process that has not exited.
func running(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return false
	}
	return code == stillActive
}
