package launch

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cursorkit/cursorkit/failure"
)

// EnableSubreaper makes the calling process a child subreaper (Linux
// PR_SET_CHILD_SUBREAPER), so descendants orphaned by a double fork or a
// setsid daemon are reparented to it instead of init, where KillTree finds
// them by their launch token, kills and reaps them. It is a process-wide
// opt-in that the cursorkit CLI turns on once at startup; a library user
// should enable it only if nothing else in the program calls wait for any
// child (Wait4(-1)), which would race with the PID-specific reaping here.
// orphans that exit by themselves before a KillTree stay zombies until the
// program exits.
func EnableSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return failure.Wrap(failure.Setup, err, "cannot become a child subreaper")
	}
	return nil
}

// subreaperMode reports whether this process is a child subreaper now
// (EnableSubreaper, or inherited: the setting survives fork and exec). An
// error reads as true, which only costs a needless search.
func subreaperMode() bool {
	var on int32
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&on)), 0, 0, 0); err != nil {
		return true
	}
	return on != 0
}

// childrenReads bounds how often ownChildren is read while looking for two
// reads that agree.
const childrenReads = 4

// orphansMayRemain reports, after the child exited and was reaped, whether
// an orphan of its tree may have been reparented to this subreaper and
// still run: a child of this process, started no earlier than the root,
// that carries the root's launch token. Those and their descendants are
// what KillTree would look for; every living descendant of the tree is
// below such an orphan, since it is reparented to this process whenever
// its parent dies. This reads this process's children lists instead of the
// whole process table. A list read while another child is reaped can skip
// an entry (the kernel walks the list one entry per step), so the lists are
// read until two reads agree; when they never do, or cannot be read, the
// answer is true.
func (p *Process) orphansMayRemain() bool {
	if p.sys.token == "" || !subreaperMode() {
		return false
	}
	var children []int
	for read := 0; ; read++ {
		now, err := ownChildren()
		if err != nil || read == childrenReads {
			return true
		}
		if read > 0 && slices.Equal(now, children) {
			break
		}
		children = now
	}
	for _, pid := range children {
		e, err := readProc(pid)
		if err != nil || e.StartTime < p.root.StartTime {
			continue // gone, or older than the tree
		}
		if hasLaunchToken(pid, p.sys.token) {
			return true
		}
	}
	return false
}

// ownChildren returns the sorted PIDs of this process's children, living
// or zombie, from /proc/self/task/<tid>/children of every thread (a child
// belongs to the thread that forked it or adopted it).
func ownChildren() ([]int, error) {
	dir, err := os.Open("/proc/self/task")
	if err != nil {
		return nil, err
	}
	tids, err := dir.Readdirnames(-1)
	dir.Close()
	if err != nil {
		return nil, err
	}
	var out []int
	for _, tid := range tids {
		task := "/proc/self/task/" + tid
		data, err := os.ReadFile(task + "/children")
		if err != nil {
			if _, statErr := os.Stat(task); os.IsNotExist(err) && os.IsNotExist(statErr) {
				continue // the thread exited; its children moved to another
			}
			return nil, err // including a kernel without the children file
		}
		for field := range strings.FieldsSeq(string(data)) {
			pid, err := strconv.Atoi(field)
			if err != nil {
				return nil, err
			}
			out = append(out, pid)
		}
	}
	slices.Sort(out)
	return out, nil
}
