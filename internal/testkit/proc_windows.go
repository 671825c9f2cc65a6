package testkit

import (
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// lookup returns the identity of the running process pid; ok is false when
// there is none or it has exited.
func lookup(pid int) (procID, bool) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return 0, false
	}
	defer windows.CloseHandle(h)
	return identify(h)
}

// identify returns the creation time of the process h, unless it exited.
func identify(h windows.Handle) (procID, bool) {
	if ev, err := windows.WaitForSingleObject(h, 0); err != nil || ev != uint32(windows.WAIT_TIMEOUT) {
		return 0, false
	}
	var created, exited, kernel, user windows.Filetime
	if windows.GetProcessTimes(h, &created, &exited, &kernel, &user) != nil {
		return 0, false
	}
	return procID(uint64(created.HighDateTime)<<32 | uint64(created.LowDateTime)), true
}

func (id procID) started() time.Time {
	ft := windows.Filetime{HighDateTime: uint32(id >> 32), LowDateTime: uint32(id)}
	return time.Unix(0, ft.Nanoseconds())
}

// kill terminates pid if it is still the process id names; the handle pins
// the process between the check and the kill.
func kill(pid int, id procID) error {
	h, err := windows.OpenProcess(windows.PROCESS_TERMINATE|windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return os.ErrProcessDone
	}
	defer windows.CloseHandle(h)
	if now, ok := identify(h); !ok || now != id {
		return os.ErrProcessDone
	}
	return windows.TerminateProcess(h, 1)
}

// carrying finds nothing: Windows has no cheap argv scan, so a watch there
// covers the processes added or recorded.
func carrying(string) map[int]procID { return nil }
