package launch

import (
	"errors"

	"golang.org/x/sys/unix"
)

// snapshot reads the process table with one kern.proc.all sysctl.
func snapshot() ([]proc, error) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, err
	}
	table := make([]proc, 0, len(kps))
	for i := range kps {
		table = append(table, kinfoProc(&kps[i]))
	}
	return table, nil
}

func kinfoProc(kp *unix.KinfoProc) proc {
	tv := kp.Proc.P_starttime
	return proc{
		Pid:       int(kp.Proc.P_pid),
		PPid:      int(kp.Eproc.Ppid),
		Group:     int(kp.Eproc.Pgid),
		StartTime: uint64(tv.Sec)*1_000_000 + uint64(tv.Usec),
	}
}

func startTimeOf(pid int) (uint64, error) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.pid", pid)
	if err != nil {
		return 0, err
	}
	if len(kps) != 1 {
		return 0, errors.New("no such process")
	}
	return kinfoProc(&kps[0]).StartTime, nil
}
