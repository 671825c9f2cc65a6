package launch

import (
	"errors"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cursorkit/cursorkit/failure"
)

// The guard's entry point: when this binary runs as a launch guard, it
// never reaches main (docs/architecture.md "The launch guard").
func init() {
	if len(os.Args) == 1 && os.Args[0] == guardName && os.Getenv(guardEnv) == guardProtocol {
		os.Exit(runGuard())
	}
}

// guard owns the trees of one host program. It is the parent of every
// child the host asks for and a child subreaper, so every orphan of those
// trees is reparented to it: its descendants are exactly the trees,
// whatever they do (setsid, double forks, an empty environment). It
// signals a tree only on the host's request, and when the host's end of
// the socket closes, for whatever reason (the host exited, or was killed),
// it kills everything it holds and exits.
type guard struct {
	conn int  // the socket to the host, blocking
	self proc // the guard itself, the root of every descendant walk
	// subreaper reports that orphans are reparented to the guard.
	subreaper bool
	out       outbox // to the host, in order

	mu    sync.Mutex // guards what follows, and serialises signals with reaping
	trees map[uint64]*guardTree
	// history holds the trees that were open during the life of some
	// orphan that might still run, for attributing tokenless orphans
	// (see owner); closed trees leave it once no orphan needs them.
	history []*guardTree
	spawned chan struct{} // signalled at each spawn, for a reaper with no child
}

// guardTree is one child of the host and its tree.
type guardTree struct {
	id         uint64
	root       proc
	token      string
	opened     uint64 // the root's start time, in clock ticks since boot
	closedAt   uint64 // when the host closed it, 0 while open
	rootReaped bool
}

// runGuard is the guard's whole life; it returns the guard's exit code.
func runGuard() int {
	// The guard acts on the socket alone: signals that would stop it are
	// caught (a handler, unlike SIG_IGN, is reset to the default in the
	// children it execs).
	signal.Notify(make(chan os.Signal, 1), unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT, unix.SIGPIPE)
	unix.CloseOnExec(guardFD) // no child may hold the host's link
	self, err := readProc(os.Getpid())
	if err != nil {
		return 1
	}
	g := &guard{
		conn:    guardFD,
		self:    self,
		trees:   map[uint64]*guardTree{},
		spawned: make(chan struct{}, 1),
	}
	g.out.cond = sync.NewCond(&g.out.mu)
	g.subreaper = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == nil
	writerDone := make(chan struct{})
	go g.write(writerDone)
	g.send(guardMsg{Op: opReady, Pid: self.Pid, StartTime: self.StartTime})
	go g.reap()
	g.serve()
	g.killAll()
	g.out.close()
	<-writerDone
	return 0
}

// outbox is an unbounded queue of messages: the guard must never stop
// reaping, or answering, because the host is slow to read.
type outbox struct {
	mu     sync.Mutex
	cond   *sync.Cond
	queue  []guardMsg
	closed bool
}

func (o *outbox) put(m guardMsg) {
	o.mu.Lock()
	o.queue = append(o.queue, m)
	o.mu.Unlock()
	o.cond.Signal()
}

func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.cond.Signal()
}

// take returns the queued messages, waiting for some; ok is false once the
// queue is closed and empty.
func (o *outbox) take() (ms []guardMsg, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for len(o.queue) == 0 && !o.closed {
		o.cond.Wait()
	}
	ms, o.queue = o.queue, nil
	return ms, len(ms) > 0 || !o.closed
}

// write sends the queued messages in order. A failed write drops the rest:
// the host is gone, and serve sees the socket close.
func (g *guard) write(done chan<- struct{}) {
	defer close(done)
	broken := false
	for {
		ms, ok := g.out.take()
		if !ok {
			return
		}
		for _, m := range ms {
			if broken {
				break
			}
			frame, err := encodeFrame(m)
			if err == nil {
				err = sendFrame(g.conn, frame, nil)
			}
			broken = err != nil
		}
	}
}

// send queues a message for the host.
func (g *guard) send(m guardMsg) { g.out.put(m) }

// reap reaps every child of the guard as it exits, the host's children and
// the orphans reparented to the guard alike, and reports each host child's
// exit. It peeks with WNOWAIT and reaps under g.mu, so a group signal never
// races with the reaping of the group's leader.
func (g *guard) reap() {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOWAIT, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ECHILD):
			<-g.spawned // no child: wait for the next one
			continue
		case err != nil:
			return
		}
		pid := childPid(&info)
		g.mu.Lock()
		var ws unix.WaitStatus
		for {
			if _, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); !errors.Is(err, unix.EINTR) {
				break
			}
		}
		for _, t := range g.trees {
			if t.root.Pid == pid && !t.rootReaped {
				t.rootReaped = true
				status := childStatus(&info)
				g.send(guardMsg{Op: opExited, ID: t.id, Status: &status})
			}
		}
		g.mu.Unlock()
	}
}

// serve answers the host's requests until its end of the socket closes.
func (g *guard) serve() {
	for {
		m, fds, err := recvFrame(g.conn)
		if err != nil {
			return
		}
		switch m.Op {
		case opSpawn:
			g.spawn(m, fds)
		case opTerminate:
			g.send(g.terminate(m.ID))
		case opKill:
			report, err := g.kill(m.ID, false)
			g.send(replyWith(guardMsg{Op: opKilled, ID: m.ID, Report: &report}, err))
		case opClose:
			report, err := g.kill(m.ID, true)
			g.send(replyWith(guardMsg{Op: opClosed, ID: m.ID, Report: &report}, err))
		default:
			closeAllFds(fds)
			return // not a host of this protocol
		}
	}
}

func replyWith(m guardMsg, err error) guardMsg {
	if err != nil {
		m.Err = err.Error()
	}
	return m
}

// spawn starts a child with the three descriptors that came with the
// request as its stdin, stdout and stderr, which the guard then closes.
func (g *guard) spawn(m guardMsg, fds []int) {
	defer closeAllFds(fds)
	if len(fds) != 3 {
		g.send(guardMsg{Op: opFailed, ID: m.ID, Errno: int(syscall.EBADF)})
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	pid, err := syscall.ForkExec(m.Path, m.Args, &syscall.ProcAttr{
		Dir:   m.Dir,
		Env:   m.Env,
		Files: []uintptr{uintptr(fds[0]), uintptr(fds[1]), uintptr(fds[2])},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		g.send(guardMsg{Op: opFailed, ID: m.ID, Errno: int(errnoOf(err))})
		return
	}
	t := &guardTree{id: m.ID, token: m.Token, root: proc{Pid: pid, PPid: g.self.Pid, Group: pid}}
	if st, err := startTimeOf(pid); err == nil {
		t.root.StartTime = st
	}
	t.opened = t.root.StartTime
	g.trees[m.ID] = t
	g.history = append(g.history, t)
	var warnings []failure.Warning
	if !g.subreaper {
		warnings = append(warnings, warning(WarnNoSubreaper))
	}
	g.send(guardMsg{Op: opStarted, ID: m.ID, Pid: pid, StartTime: t.root.StartTime, Warnings: warnings})
	select {
	case g.spawned <- struct{}{}:
	default:
	}
}

// terminate sends SIGTERM to the tree's process group, when that is safe.
func (g *guard) terminate(id uint64) guardMsg {
	reply := guardMsg{Op: opTerminated, ID: id}
	g.mu.Lock()
	t := g.trees[id]
	var err error
	if t == nil {
		err = os.ErrProcessDone
	} else {
		err = terminateGroup(t.root.Pid, t.rootReaped)
	}
	g.mu.Unlock()
	switch {
	case errors.Is(err, os.ErrProcessDone):
		reply.Done = true
	case err != nil:
		reply.Err = err.Error()
	}
	return reply
}

// kill is KillTree (or, with closing, Close) inside the guard: it kills
// tree id's process group, the root's descendants by parent chain, and the
// orphans adopted by the guard that belong to the tree (see owner), with
// their descendants. Closing also marks the tree closed and forgets it,
// which may settle the owner of orphans that could have been the tree's or
// an already closed tree's: those are killed too.
func (g *guard) kill(id uint64, closing bool) (KillReport, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	t := g.trees[id]
	if t == nil {
		return KillReport{Method: MethodProcessGroup}, nil
	}
	if closing {
		t.closedAt = ticksNow()
		if t.rootReaped && !g.adoptedAny() {
			// Nothing of the tree can be left: every living descendant
			// of a reaped root is below an orphan the guard adopted.
			delete(g.trees, id)
			g.prune()
			return KillReport{Method: MethodProcessGroup}, nil
		}
	}
	report, killed, err := freezeAndKill(t.root.Pid, func(table []proc, tableErr error) bool {
		return groupSignalSafe(t.root.Pid, t.rootReaped, table, tableErr)
	}, func(table []proc) []proc { return g.victims(t, table) })
	deadline := time.Now().Add(reapWait)
	for _, pn := range killed {
		// A pidfd turns readable when its process dies, before it is
		// reaped; reap, blocked on g.mu meanwhile, reaps it afterwards.
		if pn.awaitExit(deadline) && pn.proc.PPid == g.self.Pid && pn.proc.Pid != t.root.Pid {
			report.Reaped++ // an orphan the guard adopted
		}
		pn.release()
	}
	if closing {
		delete(g.trees, id)
		g.prune()
	}
	return report, err
}

// victims returns the processes of table to kill for tree t: the root's
// descendants by parent chain and the guard's adopted orphans that t owns,
// with their descendants.
func (g *guard) victims(t *guardTree, table []proc) []proc {
	out := descendants(t.root, table)
	seen := map[int]bool{t.root.Pid: true}
	for _, v := range out {
		seen[v.Pid] = true
	}
	for _, e := range table {
		if e.PPid != g.self.Pid || seen[e.Pid] || g.isRoot(e) {
			continue
		}
		if o := g.owner(e); o != t && (o == nil || o.closedAt == 0) {
			continue // another open tree's, or not yet told
		}
		seen[e.Pid] = true
		out = append(out, e)
		for _, d := range descendants(e, table) {
			if !seen[d.Pid] {
				seen[d.Pid] = true
				out = append(out, d)
			}
		}
	}
	return out
}

// isRoot reports whether e is the root of an open tree.
func (g *guard) isRoot(e proc) bool {
	for _, t := range g.trees {
		if e.Same(t.root) {
			return true
		}
	}
	return false
}

// owner returns the tree an orphan adopted by the guard belongs to, or nil
// while that cannot be told. A launch token in its environment names the
// tree. Without one (an orphan that cleared its environment, or one being
// replaced by exec), only trees open when the orphan started can have made
// it: when the one still open among them is being killed, or none is open,
// it is that tree's (or a closed tree's, which makes it anybody's to kill);
// while another candidate is open it waits for that tree to close.
func (g *guard) owner(e proc) *guardTree {
	if tokens := launchTokens(e.Pid); len(tokens) > 0 {
		for _, t := range g.history {
			if t.token != "" && slices.Contains(tokens, t.token) {
				return t
			}
		}
	}
	var open []*guardTree
	var last *guardTree
	for _, t := range g.history {
		// Start times are in ticks: a tree that opened or closed within a
		// tick of the orphan's start counts as a candidate.
		if t.opened > e.StartTime+1 || (t.closedAt != 0 && t.closedAt+1 < e.StartTime) {
			continue
		}
		last = t
		if t.closedAt == 0 {
			open = append(open, t)
		}
	}
	switch len(open) {
	case 0:
		return last // every candidate is closed: whoever asks may kill it
	case 1:
		return open[0]
	}
	return nil
}

// adoptedAny reports whether the guard has a child that is not the root of
// an open tree: an orphan it adopted (living or not yet reaped). The
// kernel's children lists can skip an entry while they change, so they are
// read until two reads agree; when they never do, or cannot be read, the
// answer is true.
func (g *guard) adoptedAny() bool {
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
		root := false
		for _, t := range g.trees {
			root = root || (t.root.Pid == pid && !t.rootReaped)
		}
		if !root {
			return true
		}
	}
	return false
}

// childrenReads bounds how often ownChildren is read while looking for two
// reads that agree.
const childrenReads = 4

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

// prune drops closed trees from the history once no orphan of the guard
// started before they closed. It reads the process table, so it waits
// until closed trees outnumber open ones by a margin.
func (g *guard) prune() {
	if len(g.history) < 2*len(g.trees)+16 {
		return
	}
	table, err := snapshot()
	if err != nil {
		return
	}
	oldest := uint64(0)
	for _, e := range table {
		if e.PPid == g.self.Pid && !g.isRoot(e) && (oldest == 0 || e.StartTime < oldest) {
			oldest = e.StartTime
		}
	}
	g.history = slices.DeleteFunc(g.history, func(t *guardTree) bool {
		return t.closedAt != 0 && (oldest == 0 || t.closedAt+1 < oldest)
	})
}

// killAll kills every descendant of the guard (the host is gone), then
// waits a little for the reaper to see them go.
func (g *guard) killAll() {
	g.mu.Lock()
	_, killed, _ := freezeAndKill(0, func([]proc, error) bool { return false }, func(table []proc) []proc {
		return descendants(g.self, table)
	})
	deadline := time.Now().Add(reapWait)
	for _, pn := range killed {
		pn.awaitExit(deadline)
		pn.release()
	}
	g.mu.Unlock()
}

// ticksNow returns the time since boot in the clock ticks of
// /proc/<pid>/stat's start times (USER_HZ, 100 on Linux).
func ticksNow() uint64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return 0
	}
	return uint64(ts.Sec)*userHZ + uint64(ts.Nsec)/(1e9/userHZ)
}

// userHZ is the unit of start times in /proc/<pid>/stat.
const userHZ = 100
