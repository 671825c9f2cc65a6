package testkit

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// sZomb is a zombie's p_stat (sys/proc.h).
const sZomb = 5

// lookup returns the identity of the running process pid; ok is false when
// there is none or it is a zombie.
func lookup(pid int) (procID, bool) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || int(k.Proc.P_pid) != pid || k.Proc.P_stat == sZomb {
		return 0, false
	}
	tv := k.Proc.P_starttime
	return procID(tv.Sec*1_000_000 + int64(tv.Usec)), true
}

func (id procID) started() time.Time { return time.UnixMicro(int64(id)) }

// kill sends SIGKILL to pid if it is still the process id names (checked
// just before: macOS has no pidfd to pin it).
func kill(pid int, id procID) error {
	if now, ok := lookup(pid); !ok || now != id {
		return os.ErrProcessDone
	}
	return unix.Kill(pid, unix.SIGKILL)
}

// carrying finds nothing: there is no cheap argv scan here, so a watch
// covers the processes added or recorded.
func carrying(string) map[int]procID { return nil }
