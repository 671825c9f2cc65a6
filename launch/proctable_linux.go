package launch

import (
	"errors"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// snapshot reads the process table from /proc once, leaving out processes
// that vanish meanwhile. The sweep takes one per round, so it allocates
// little: getdents into one buffer, PIDs parsed from its bytes, every
// /proc/<pid>/stat opened through a reused path buffer (os.ReadFile and
// Readdirnames would allocate a string, a File and a buffer per process).
func snapshot() ([]proc, error) {
	dir, err := unix.Open("/proc", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dir)
	var sr statReader
	dents := make([]byte, 16<<10)
	var table []proc
	for {
		var n int
		if err := ignoringEINTR(func() (err error) { n, err = unix.Getdents(dir, dents); return err }); err != nil {
			return nil, err
		}
		if n <= 0 {
			return table, nil
		}
		forEachDirentPid(dents[:n], func(pid int) {
			if e, err := sr.read(pid); err == nil {
				table = append(table, e)
			}
		})
	}
}

// Offsets in a linux_dirent64 record (the same on every architecture).
const (
	direntReclen = int(unsafe.Offsetof(unix.Dirent{}.Reclen))
	direntName   = int(unsafe.Offsetof(unix.Dirent{}.Name))
)

// forEachDirentPid calls f with each entry of a getdents64 buffer whose
// name is a positive decimal number (a /proc/<pid> directory).
func forEachDirentPid(buf []byte, f func(pid int)) {
	for len(buf) >= direntName {
		reclen := int(*(*uint16)(unsafe.Pointer(&buf[direntReclen])))
		if reclen < direntName || reclen > len(buf) {
			return
		}
		if pid, ok := parsePid(buf[direntName:reclen]); ok {
			f(pid)
		}
		buf = buf[reclen:]
	}
}

// parsePid parses a NUL-terminated or NUL-padded all-digit directory name.
func parsePid(name []byte) (int, bool) {
	pid, digits := 0, 0
	for _, c := range name {
		if c == 0 {
			break
		}
		if c < '0' || c > '9' || digits >= 9 {
			return 0, false
		}
		pid = pid*10 + int(c-'0')
		digits++
	}
	return pid, digits > 0 && pid > 0
}

// statReader reads /proc/<pid>/stat files with raw system calls into
// buffers it reuses from one process to the next.
type statReader struct {
	path [32]byte   // "/proc/<pid>/stat" and a NUL
	buf  [1024]byte // 52 numeric fields and a command name of at most 64 bytes
}

// readProc reads one /proc/<pid>/stat.
func readProc(pid int) (proc, error) {
	var sr statReader
	return sr.read(pid)
}

func (sr *statReader) read(pid int) (proc, error) {
	path := append(sr.path[:0], "/proc/"...)
	path = strconv.AppendInt(path, int64(pid), 10)
	path = append(path, "/stat\x00"...)
	fd, err := openReadOnly(path)
	if err != nil {
		return proc{}, err
	}
	defer unix.Close(fd)
	n := 0
	for n < len(sr.buf) {
		var m int
		if err := ignoringEINTR(func() (err error) { m, err = unix.Read(fd, sr.buf[n:]); return err }); err != nil {
			return proc{}, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return parseProcStat(sr.buf[:n])
}

// openReadOnly opens the NUL-terminated path for reading (unix.Open would
// copy it into a fresh allocation).
func openReadOnly(path []byte) (int, error) {
	cwd := unix.AT_FDCWD // a variable: the negative constant has no uintptr value
	for {
		fd, _, errno := unix.Syscall6(unix.SYS_OPENAT, uintptr(cwd), uintptr(unsafe.Pointer(&path[0])), uintptr(unix.O_RDONLY|unix.O_CLOEXEC), 0, 0, 0)
		switch errno {
		case 0:
			return int(fd), nil
		case unix.EINTR:
			continue
		}
		return -1, errno
	}
}

func startTimeOf(pid int) (uint64, error) {
	e, err := readProc(pid)
	return e.StartTime, err
}

// pin holds a victim between its identity check and its signal. Once its
// pidfd is open and the start time still matches, the pidfd names that very
// process even if it dies and its PID is reused.
type pin struct {
	proc proc
	fd   int // pidfd, or -1 where the kernel has none
}

// pinProcess pins v if it still exists with v's start time. A nil pin with
// mismatch set means the PID now names another process.
func pinProcess(v proc) (pn *pin, mismatch bool) {
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

func (pn *pin) signal(sig unix.Signal) bool {
	if pn.fd >= 0 {
		return unix.PidfdSendSignal(pn.fd, sig, nil, 0) == nil
	}
	return unix.Kill(pn.proc.Pid, sig) == nil
}

// awaitExit reports whether the pinned process exited before deadline.
func (pn *pin) awaitExit(deadline time.Time) bool {
	if pn.fd < 0 {
		return true // no pidfd to wait on: the caller's own wait decides
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

func (pn *pin) release() {
	if pn.fd >= 0 {
		unix.Close(pn.fd)
		pn.fd = -1
	}
}
