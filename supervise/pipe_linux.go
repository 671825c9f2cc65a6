package supervise

import (
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// pipeMaxSizeFile holds the largest pipe F_SETPIPE_SZ grants unprivileged.
const pipeMaxSizeFile = "/proc/sys/fs/pipe-max-size"

// growPipe asks the kernel, best effort, to enlarge the pipe behind r to
// size bytes, capped at fs/pipe-max-size, and returns its capacity
// afterwards; 0 when r is not a file or the kernel refused (EPERM past
// the per-user pipe limits, EBUSY, not a pipe).
func growPipe(r io.Reader, size int) int {
	sc, ok := r.(syscall.Conn)
	if !ok {
		return 0
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	if limit, ok := pipeMaxSize(); ok {
		size = min(size, limit)
	}
	got := 0
	_ = rc.Control(func(fd uintptr) {
		if n, err := unix.FcntlInt(fd, unix.F_SETPIPE_SZ, size); err == nil {
			got = n
		}
	})
	return got
}

// pipeMaxSize reads fs/pipe-max-size; ok is false when it cannot.
func pipeMaxSize() (int, bool) {
	text, err := os.ReadFile(pipeMaxSizeFile)
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(text)))
	return n, err == nil && n > 0
}
