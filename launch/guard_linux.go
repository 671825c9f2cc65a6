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

	"golang.org/x/sys/unix"

	"github.com/cursorkit/cursorkit/failure"
)

// When this binary runs as a launch guard it never reaches main.
func init() {
	if len(os.Args) == 1 && os.Args[0] == guardName && os.Getenv(guardEnv) == guardProtocol {
		os.Exit(runGuard())
	}
}

// guard owns the trees of one host program. As the parent of every child
// the host asks for and a child subreaper, which every orphan of those
// trees is reparented to, its descendants are exactly the trees, whatever
// they do (setsid, double forks, an empty environment). It signals a tree
// only on the host's request, and kills everything when the host's end of
// the socket closes (the host exited or was killed).
type guard struct {
	conn      int  // the socket to the host, blocking
	self      proc // the root of every descendant walk
	subreaper bool // orphans are reparented to the guard
	out       outbox

	mu    sync.Mutex // guards what follows, and serialises signals with reaping
	trees map[uint64]*guardTree
	// history holds the trees open during the life of some orphan that
	// might still run, to attribute tokenless orphans (see owner).
	history []*guardTree
	spawned chan struct{} // signalled at each spawn, for a reaper with no child
}

type guardTree struct {
	id         uint64
	root       proc
	token      string
	opened     uint64 // the root's start time, in clock ticks since boot
	closedAt   uint64 // when the host closed it, 0 while open
	rootReaped bool
}

// runGuard is the guard's whole life; it returns its exit code.
func runGuard() int {
	// The guard acts on the socket alone: signals that would stop it are
	// caught (a handler, unlike SIG_IGN, is reset in the children it execs).
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
	g.out.put(guardMsg{Op: opReady, Pid: self.Pid, StartTime: self.StartTime})
	go g.reap()
	go func() {
		g.serve()
		g.killAll()
		g.out.close()
	}()
	g.write()
	return 0
}

// outbox is an unbounded queue of messages to the host: the guard must
// never stop reaping, or answering, because the host is slow to read.
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

// take waits for queued messages; ok is false once closed and empty.
func (o *outbox) take() (ms []guardMsg, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for len(o.queue) == 0 && !o.closed {
		o.cond.Wait()
	}
	ms, o.queue = o.queue, nil
	return ms, len(ms) > 0 || !o.closed
}

// write sends the queued messages in order. After a failed write the host
// is gone: the rest are dropped, and serve sees the socket close.
func (g *guard) write() {
	var err error
	for ms, ok := g.out.take(); ok; ms, ok = g.out.take() {
		for _, m := range ms {
			var frame []byte
			if err == nil {
				frame, err = encodeFrame(m)
			}
			if err == nil {
				_, err = sendFrame(g.conn, frame, nil, 0)
			}
		}
	}
}

// reap reaps every child of the guard, the host's and adopted orphans
// alike, and reports each host child's exit. It peeks with WNOWAIT and
// reaps under g.mu, so a group signal never races with the reaping of the
// group's leader.
func (g *guard) reap() {
	for {
		var info unix.Siginfo
		err := ignoringEINTR(func() error { return unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOWAIT, nil) })
		switch {
		case errors.Is(err, unix.ECHILD):
			<-g.spawned // no child: wait for the next one
			continue
		case err != nil:
			return
		}
		pid := childPid(&info)
		g.mu.Lock()
		_ = ignoringEINTR(func() error {
			_, err := unix.Wait4(pid, nil, unix.WNOHANG, nil)
			return err
		})
		for _, t := range g.trees {
			if t.root.Pid == pid && !t.rootReaped {
				t.rootReaped = true
				status := childStatus(&info)
				g.out.put(guardMsg{Op: opExited, ID: t.id, Status: &status})
			}
		}
		g.mu.Unlock()
	}
}

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
			g.out.put(g.terminate(m.ID))
		case opKill:
			report, err := g.kill(m.ID, false)
			g.out.put(replyWith(guardMsg{Op: opKilled, ID: m.ID, Report: &report}, err))
		case opClose:
			report, err := g.kill(m.ID, true)
			g.out.put(replyWith(guardMsg{Op: opClosed, ID: m.ID, Report: &report}, err))
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

// spawn starts a child on the request's three descriptors, then closes them.
func (g *guard) spawn(m guardMsg, fds []int) {
	defer closeAllFds(fds)
	if len(fds) != 3 {
		g.out.put(guardMsg{Op: opFailed, ID: m.ID, Errno: int(syscall.EBADF)})
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	pid, err := syscall.ForkExec(string(m.Path), fromWire(m.Args), &syscall.ProcAttr{
		Dir:   string(m.Dir),
		Env:   fromWire(m.Env),
		Files: []uintptr{uintptr(fds[0]), uintptr(fds[1]), uintptr(fds[2])},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		errno := syscall.EIO
		_ = errors.As(err, &errno) // else EIO
		g.out.put(guardMsg{Op: opFailed, ID: m.ID, Errno: int(errno)})
		return
	}
	st, _ := startTimeOf(pid) // 0, unknown, when unreadable
	t := &guardTree{id: m.ID, token: m.Token, root: proc{Pid: pid, PPid: g.self.Pid, Group: pid, StartTime: st}, opened: st}
	g.trees[m.ID] = t
	g.history = append(g.history, t)
	var warnings []failure.Warning
	if !g.subreaper {
		warnings = append(warnings, warning(WarnNoSubreaper))
	}
	g.out.put(guardMsg{Op: opStarted, ID: m.ID, Pid: pid, StartTime: t.root.StartTime, Warnings: warnings})
	select {
	case g.spawned <- struct{}{}:
	default:
	}
}

func (g *guard) terminate(id uint64) guardMsg {
	g.mu.Lock()
	err := os.ErrProcessDone
	if t := g.trees[id]; t != nil {
		err = terminateGroup(t.root, t.rootReaped)
	}
	g.mu.Unlock()
	if errors.Is(err, os.ErrProcessDone) {
		return guardMsg{Op: opTerminated, ID: id, Done: true}
	}
	return replyWith(guardMsg{Op: opTerminated, ID: id}, err)
}

// kill is KillTree (or, with closing, Close) inside the guard: it kills
// tree id's group, the root's descendants by parent chain, and the adopted
// orphans the tree owns (see owner) with their descendants. Closing also
// marks the tree closed and forgets it, which may settle the owner of
// orphans that could have been this or a closed tree's: those die too.
func (g *guard) kill(id uint64, closing bool) (KillReport, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	t := g.trees[id]
	if t == nil {
		return KillReport{Method: MethodProcessGroup}, nil
	}
	if closing {
		t.closedAt = ticksNow()
		defer func() {
			delete(g.trees, id)
			g.prune()
		}()
		if t.rootReaped && !g.adoptedAny() {
			// Nothing of the tree can be left: every living descendant
			// of a reaped root is below an orphan the guard adopted.
			return KillReport{Method: MethodProcessGroup}, nil
		}
	}
	report, killed, err := freezeAndKill(t.root, func() bool { return t.rootReaped }, func(table []proc) []proc { return g.victims(t, table) })
	// A pidfd turns readable when its process dies, before it is reaped;
	// reap, blocked on g.mu meanwhile, reaps it afterwards.
	for _, e := range awaitKilled(killed) {
		if e.PPid == g.self.Pid && e.Pid != t.root.Pid {
			report.Reaped++ // an orphan the guard adopted
		}
	}
	return report, err
}

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

func (g *guard) isRoot(e proc) bool {
	for _, t := range g.trees {
		if e.Same(t.root) {
			return true
		}
	}
	return false
}

// owner returns the tree an adopted orphan belongs to, or nil while that
// cannot be told. A launch token in its environment names the tree. Without
// one (it cleared its environment, or is being replaced by exec), only
// trees open when it started can have made it: when just one of them is
// still open it is that tree's; when none is, a closed tree's, anybody's to
// kill; while several are, it waits until one is left.
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
// an open tree: an adopted orphan, living or not yet reaped. The kernel's
// children lists can skip an entry while they change, so they are read
// until two reads agree; when they never do, or cannot be read, it is true.
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

// childrenReads bounds adoptedAny's reads of ownChildren.
const childrenReads = 4

// ownChildren returns the sorted PIDs of this process's children, living
// or zombie, from every thread's /proc/self/task/<tid>/children (a child
// belongs to the thread that forked or adopted it).
func ownChildren() ([]int, error) {
	tids, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, tid := range tids {
		task := "/proc/self/task/" + tid.Name()
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
// started before they closed. It reads the process table, so only once
// closed trees outnumber open ones by a margin.
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

// killAll kills every descendant of the guard: the host is gone.
func (g *guard) killAll() {
	g.mu.Lock()
	_, killed, _ := freezeAndKill(proc{}, nil, func(table []proc) []proc { return descendants(g.self, table) })
	awaitKilled(killed)
	g.mu.Unlock()
}

// ticksNow returns the time since boot in the clock ticks of start times.
func ticksNow() uint64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return 0
	}
	return uint64(ts.Sec)*userHZ + uint64(ts.Nsec)/(1e9/userHZ)
}

// userHZ is the unit of start times in /proc/<pid>/stat.
const userHZ = 100
