package testkit

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// tick is the unit of /proc start times (USER_HZ is 100 on every Linux).
const tick = 10 * time.Millisecond

// lookup returns the identity of the running process pid; ok is false when
// there is none or it is a zombie.
func lookup(pid int) (procID, bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	return parseStat(stat)
}

// parseStat reads the state and start time of /proc/PID/stat. The fields
// follow the parenthesised command name, which may itself hold ") ".
func parseStat(stat []byte) (procID, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 20 { // state is field 3 of proc(5), starttime field 22
		return 0, false
	}
	switch fields[0] {
	case "Z", "X", "x":
		return 0, false
	}
	start, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return 0, false
	}
	return procID(start), true
}

// started returns the wall-clock time at which the process started: the
// boot time (now minus CLOCK_BOOTTIME, the clock of /proc start times) plus
// its start ticks.
func (id procID) started() time.Time {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return time.Time{}
	}
	return time.Now().Add(-time.Duration(ts.Nano())).Add(time.Duration(id) * tick)
}

// kill sends SIGKILL to pid if it is still the process id names. A pidfd
// pins the process between the check and the signal; without pidfds
// (Linux < 5.3, some sandboxes) the signal goes by PID right after the
// check.
func kill(pid int, id procID) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if err == unix.ESRCH {
		return os.ErrProcessDone
	}
	if err == nil {
		defer unix.Close(fd)
	}
	if now, ok := lookup(pid); !ok || now != id {
		return os.ErrProcessDone
	}
	if err != nil {
		return unix.Kill(pid, unix.SIGKILL)
	}
	return unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
}

// PIDs returns the PIDs of the processes in /proc for which keep, given
// the PID and its /proc directory, reports true, in /proc's order. keep
// reads what it needs there: a process that vanishes meanwhile fails its
// reads, and keep leaves it out. ok is false when /proc cannot be listed.
func PIDs(keep func(pid int, dir string) bool) (pids []int, ok bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && keep(pid, "/proc/"+e.Name()) {
			pids = append(pids, pid)
		}
	}
	return pids, true
}

// carrying scans /proc for the running processes that have marker as one
// whole argument. A zombie's argv is empty, so zombies do not count; nor do
// processes that vanish during the scan.
func carrying(marker string) map[int]procID {
	found := map[int]procID{}
	PIDs(func(pid int, dir string) bool {
		cmdline, err := os.ReadFile(dir + "/cmdline")
		isMarker := func(arg []byte) bool { return string(arg) == marker }
		if err != nil || !slices.ContainsFunc(bytes.Split(cmdline, []byte{0}), isMarker) {
			return false
		}
		if id, ok := lookup(pid); ok {
			found[pid] = id
		}
		return true
	})
	return found
}
