package launch

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cursorkit/cursorkit/failure"
)

// newLaunchToken returns a fresh random launch token.
func newLaunchToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", failure.Wrap(failure.Resource, err, "cannot generate a launch token")
	}
	return hex.EncodeToString(b[:]), nil
}

// snapshot reads the process table from /proc once. Processes that vanish
// while it is read are left out.
func snapshot() ([]Proc, error) {
	dir, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	table := make([]Proc, 0, len(names))
	var buf [statBufSize]byte
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 {
			continue
		}
		e, err := readProcInto(pid, buf[:])
		if err != nil {
			continue
		}
		table = append(table, e)
	}
	return table, nil
}

// statBufSize holds any /proc/<pid>/stat line (52 numeric fields and a
// command name of at most 64 bytes).
const statBufSize = 1024

// readProc reads one /proc/<pid>/stat.
func readProc(pid int) (Proc, error) {
	var buf [statBufSize]byte
	return readProcInto(pid, buf[:])
}

// readProcInto reads /proc/<pid>/stat with raw system calls into buf: the
// sweep reads one per process, so os.ReadFile's extra stat and poller
// registration would dominate its cost.
func readProcInto(pid int, buf []byte) (Proc, error) {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return Proc{}, err
	}
	defer unix.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return Proc{}, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return ParseProcStat(buf[:n])
}

// startTimeOf returns pid's start time in clock ticks since boot.
func startTimeOf(pid int) (uint64, error) {
	e, err := readProc(pid)
	return e.StartTime, err
}

// hasLaunchToken reports whether pid's environment holds token as its
// LaunchIDEnv. A zombie's environment is unreadable, so it never matches.
func hasLaunchToken(pid int, token string) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	prefix := []byte(LaunchIDEnv + "=")
	found := false
	for _, kv := range bytes.Split(data, []byte{0}) {
		if list, ok := bytes.CutPrefix(kv, prefix); ok {
			// exec keeps the last duplicate, so the last entry counts.
			found = tokenListHas(string(list), token)
		}
	}
	return found
}

// pin holds a victim between its identity check and its signal. With a
// pidfd the identity cannot change in between: once the pidfd is open and
// the start time still matches, the pidfd names that very process even if
// it dies and its PID is reused.
type pin struct {
	proc Proc
	fd   int // pidfd, or -1 where the kernel has none
}

// pinProcess pins v if it still exists with v's start time. A nil pin with
// mismatch set means the PID now names another process.
func pinProcess(v Proc) (pn *pin, mismatch bool) {
	fd, err := unix.PidfdOpen(v.Pid, 0)
	if err != nil {
		if !errors.Is(err, unix.ENOSYS) {
			return nil, false
		}
		fd = -1
	}
	st, err := startTimeOf(v.Pid)
	if err != nil || st != v.StartTime {
		if fd >= 0 {
			unix.Close(fd)
		}
		return nil, err == nil
	}
	return &pin{proc: v, fd: fd}, false
}

// signal sends sig and reports whether it was delivered.
func (pn *pin) signal(sig unix.Signal) bool {
	if pn.fd >= 0 {
		return unix.PidfdSendSignal(pn.fd, sig, nil, 0) == nil
	}
	return unix.Kill(pn.proc.Pid, sig) == nil
}

// awaitExit waits until the pinned process has exited or deadline passes.
func (pn *pin) awaitExit(deadline time.Time) bool {
	if pn.fd < 0 {
		return true // reapIfOrphan then blocks in wait4 instead
	}
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		fds := []unix.PollFd{{Fd: int32(pn.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && n > 0
	}
}

// reapIfOrphan reaps the exited, pinned process when it is now a child of
// self (reparented to this subreaper). Only that exact PID is waited for,
// never -1, so os/exec's own waits are never disturbed.
func (pn *pin) reapIfOrphan(self int) bool {
	now, err := readProc(pn.proc.Pid)
	if err != nil || now.StartTime != pn.proc.StartTime || now.PPid != self {
		return false
	}
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(pn.proc.Pid, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && got == pn.proc.Pid
	}
}

func (pn *pin) release() {
	if pn.fd >= 0 {
		unix.Close(pn.fd)
		pn.fd = -1
	}
}

// tokenListHas reports whether the comma-separated list holds token.
func tokenListHas(list, token string) bool {
	if token == "" {
		return false
	}
	for item := range strings.SplitSeq(list, ",") {
		if item == token {
			return true
		}
	}
	return false
}
