package launch

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cursorkit/cursorkit/failure"
)

// guardStartTimeout bounds a guard's exec and runtime initialisation.
const guardStartTimeout = 10 * time.Second

// guardReplyTimeout bounds the wait for an answer the guard owes at once (a
// kill's waits for its victims, reapWait).
const guardReplyTimeout = reapWait + 10*time.Second

// theGuard is this program's launch guard, started by the first Start and
// shared by every later one; another starts after it is lost. The one
// piece of package-level state in launch, on purpose: a child subreaper is
// a process-wide role, and one guard per program keeps a launch to a
// message and a fork instead of an exec of this whole binary
// (docs/architecture.md "The launch guard").
var theGuard guardSlot

type guardSlot struct {
	mu          sync.Mutex
	g           *guardConn
	unavailable bool // no guard can start here (no /proc/self/exe, say): never try again
}

// get returns a live guard, starting one if needed, or errNoGuard.
func (s *guardSlot) get(ctx context.Context) (*guardConn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unavailable {
		return nil, errNoGuard
	}
	if s.g != nil && s.g.lostErr() == nil {
		return s.g, nil
	}
	g, err := startGuard(ctx)
	if errors.Is(err, errNoGuard) {
		s.unavailable = true
	}
	if err != nil {
		return nil, err
	}
	s.g = g
	return g, nil
}

// startGuard starts a launch guard and waits for it to say it is ready.
func startGuard(ctx context.Context) (*guardConn, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, failure.Wrap(failure.Resource, err, "cannot create the launch guard's socket")
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, failure.Wrap(failure.Resource, err, "cannot set up the launch guard's socket")
	}
	conn := os.NewFile(uintptr(fds[0]), "launch-guard")
	guardEnd := os.NewFile(uintptr(fds[1]), "launch-guard")
	defer guardEnd.Close()
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{guardName},
		Env:        []string{guardEnv + "=" + guardProtocol, "GOMAXPROCS=1"},
		ExtraFiles: []*os.File{guardEnd},
		// A group of its own: a signal to this program's group (a
		// terminal's) must not reach the guard, which cleans up after it.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if err := cmd.Start(); err != nil {
		conn.Close()
		return nil, errNoGuard
	}
	guardEnd.Close()
	g := &guardConn{conn: conn, cmd: cmd, token: make(chan struct{}, 1), lostCh: make(chan struct{}), trees: map[uint64]*guardedTree{}}
	g.token <- struct{}{}
	_ = conn.SetReadDeadline(time.Now().Add(guardStartTimeout))
	stop := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Now()) })
	ready, err := readGuardMsg(conn)
	stop()
	_ = conn.SetReadDeadline(time.Time{})
	if err == nil && ready.Op == opReady {
		g.pid = ready.Pid
		return g, nil
	}
	conn.Close()
	g.reap()
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || err == nil:
		// Not a guard of this protocol (this binary run through a loader, say).
		return nil, errNoGuard
	case ctx.Err() != nil:
		return nil, failure.Wrap(failure.Cancelled, ctx.Err(), "launch cancelled while the launch guard started")
	}
	return nil, failure.Wrap(failure.Process, err, "the launch guard did not start")
}

// guardConn is this program's side of its guard. A goroutine that waits
// for a message takes the read token, reads one message, files it with its
// tree and gives the token back, so none is left reading when nobody waits.
type guardConn struct {
	conn *os.File
	cmd  *exec.Cmd // the guard
	pid  int

	wmu   sync.Mutex    // one frame at a time on conn
	token chan struct{} // the right to read conn

	mu     sync.Mutex
	trees  map[uint64]*guardedTree
	nextID uint64
	lost   error         // reading or writing failed: the guard is gone
	lostCh chan struct{} // closed with lost
}

// fail records that the guard is lost; its trees are then killed from here.
func (g *guardConn) fail(err error) {
	g.mu.Lock()
	first := g.lost == nil
	if first {
		g.lost = failure.Wrap(failure.Process, err, "lost the launch guard")
		close(g.lostCh)
	}
	g.mu.Unlock()
	if first {
		g.conn.Close()
		go g.reap()
	}
}

func (g *guardConn) reap() { _ = g.cmd.Wait() }

// send writes one frame, with fds as SCM_RIGHTS; a failure loses the guard.
func (g *guardConn) send(m guardMsg, fds []int) error {
	frame, err := encodeFrame(m)
	if err != nil {
		return failure.Wrap(failure.Input, err, "cannot encode the launch request")
	}
	g.wmu.Lock()
	defer g.wmu.Unlock()
	rc, err := g.conn.SyscallConn()
	if err == nil {
		sent := 0
		var werr error
		err = rc.Write(func(fd uintptr) bool {
			sent, werr = sendFrame(int(fd), frame, fds, sent)
			return !errors.Is(werr, unix.EAGAIN) // else wait until the socket is writable
		})
		if err == nil {
			err = werr
		}
	}
	if err != nil {
		g.fail(err)
		return g.lostErr()
	}
	return nil
}

func (g *guardConn) lostErr() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.lost
}

// readOne reads one message and files it; the caller holds the token.
func (g *guardConn) readOne() {
	m, err := readGuardMsg(g.conn)
	if err != nil {
		g.fail(err)
		return
	}
	g.mu.Lock()
	t := g.trees[m.ID]
	g.mu.Unlock()
	if t != nil {
		t.file(m)
	} // else about a tree nobody waits for any more
}

// newTree registers a tree, so the guard's answers about it are filed.
func (g *guardConn) newTree() *guardedTree {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.nextID++
	t := &guardedTree{g: g, id: g.nextID, changed: make(chan struct{})}
	g.trees[t.id] = t
	return t
}

// guardedTree is one child owned by the guard (a treeOwner). What the
// guard says about it is filed here by whichever goroutine read it.
type guardedTree struct {
	g    *guardConn
	id   uint64
	root proc

	mu      sync.Mutex
	changed chan struct{} // closed, and replaced, whenever a message is filed
	status  *ExitStatus   // the child's exit, once reported
	reply   *guardMsg     // the answer to the pending request

	closed bool // the guard forgot the tree; under the Process's mutex, like requests
}

// file records m and wakes whoever waits.
func (t *guardedTree) file(m guardMsg) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if m.Op == opExited {
		t.status = m.Status
	} else {
		t.reply = &m
	}
	close(t.changed)
	t.changed = make(chan struct{})
}

func (t *guardedTree) forget() {
	t.g.mu.Lock()
	delete(t.g.trees, t.id)
	t.g.mu.Unlock()
}

// await waits until ready (called with t.mu held) reports true, reading the
// socket itself while no other goroutine does, for at most a limit above 0.
func (t *guardedTree) await(ready func() bool, limit time.Duration) error {
	var timeout <-chan time.Time
	if limit > 0 {
		timer := time.NewTimer(limit)
		defer timer.Stop()
		timeout = timer.C
	}
	check := func() (bool, chan struct{}) {
		t.mu.Lock()
		defer t.mu.Unlock()
		return ready(), t.changed
	}
	for {
		done, changed := check()
		if done {
			return nil
		}
		select {
		case <-changed:
		case <-t.g.token:
			// Only the token's holder files messages: if what is wanted
			// is not here now, it can only come through this read.
			if done, _ := check(); !done {
				t.g.readOne()
			}
			t.g.token <- struct{}{}
		case <-t.g.lostCh:
			return t.g.lostErr()
		case <-timeout:
			t.g.fail(errors.New("the launch guard did not answer"))
		}
	}
}

// request sends m and fds and returns the guard's answer, one of answers.
// Requests of one tree are serialised by its Process's mutex.
func (t *guardedTree) request(m guardMsg, fds []int, answers ...string) (guardMsg, error) {
	m.ID = t.id
	if err := t.g.send(m, fds); err != nil {
		return guardMsg{}, err
	}
	if err := t.await(func() bool { return t.reply != nil && slices.Contains(answers, t.reply.Op) }, guardReplyTimeout); err != nil {
		return guardMsg{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	reply := *t.reply
	t.reply = nil
	return reply, nil
}

func (t *guardedTree) terminate() error {
	if t.closed {
		return errGroupExited()
	}
	reply, err := t.request(guardMsg{Op: opTerminate}, nil, opTerminated)
	switch {
	case err != nil:
		// The guard is gone: signal the group from here, if that is safe.
		return terminateGroup(t.root, true)
	case reply.Done:
		return errGroupExited()
	}
	return replyError(reply)
}

func (t *guardedTree) killTree() (KillReport, error) {
	if t.closed {
		return KillReport{Method: MethodProcessGroup}, nil // close killed it all
	}
	return t.kill(opKill, opKilled)
}

// kill has the guard kill the tree (op), or kills it here when it is lost.
func (t *guardedTree) kill(op, answer string) (KillReport, error) {
	reply, err := t.request(guardMsg{Op: op}, nil, answer)
	if err != nil {
		return t.killWithoutGuard()
	}
	report := KillReport{Method: MethodProcessGroup}
	if reply.Report != nil {
		report = *reply.Report
	}
	return report, replyError(reply)
}

// replyError is the failure the guard met while answering, nil for none.
func replyError(reply guardMsg) error {
	if reply.Err == "" {
		return nil
	}
	return failure.New(failure.Process, "%s", reply.Err)
}

// killWithoutGuard kills the tree from here after the guard was lost: the
// child and its descendants by parent chain, and its group when a snapshot
// shows that is safe. The guard's adopted orphans went to another reaper
// and are out of reach.
func (t *guardedTree) killWithoutGuard() (KillReport, error) {
	report, killed, err := freezeAndKill(t.root, func() bool { return true }, func(table []proc) []proc {
		victims := descendants(t.root, table)
		for _, e := range table {
			if e.Same(t.root) {
				victims = append(victims, e)
			}
		}
		return victims
	})
	awaitKilled(killed)
	return report, errors.Join(failure.New(failure.Process, "the launch guard was lost: killed the tree without it"), err)
}

func (t *guardedTree) wait() (ExitStatus, error) {
	if err := t.await(func() bool { return t.status != nil }, 0); err != nil {
		// The guard is gone and the child is not this program's to wait
		// for: wait for its death through a pidfd, without its status.
		if pn, _ := pinProcess(t.root); pn != nil {
			for !pn.awaitExit(time.Now().Add(time.Hour)) {
			}
			pn.release()
		}
		return ExitStatus{Code: -1}, failure.Wrap(failure.Process, err, "the child's exit status is unknown")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return *t.status, nil
}

// close tells the guard the child exited and was waited for: the guard
// kills what is left of the tree and forgets it.
func (t *guardedTree) close() error {
	if t.closed {
		return nil
	}
	t.closed = true
	defer t.forget()
	_, err := t.kill(opClose, opClosed)
	return err
}

// startGuarded starts cmd through the launch guard, which becomes the
// child's parent and owns its tree. errNoGuard (with WarnNoGuard recorded)
// means nothing started: the caller starts cmd directly.
func (p *Process) startGuarded(ctx context.Context, cmd *exec.Cmd) (treeOwner, error) {
	g, err := theGuard.get(ctx)
	if errors.Is(err, errNoGuard) {
		p.warnings = append(p.warnings, warning(WarnNoGuard))
		return nil, errNoGuard
	}
	if err != nil {
		return nil, err
	}
	token := newLaunchToken()
	cmd.Env = withLaunchToken(cmd.Env, token)
	stdio, err := p.stdioPipes()
	if err != nil {
		return nil, err
	}
	t := g.newTree()
	reply, err := t.request(guardMsg{Op: opSpawn, Path: []byte(cmd.Path), Args: wireStrings(cmd.Args), Env: wireStrings(cmd.Env), Dir: []byte(cmd.Dir), Token: token},
		[]int{int(stdio[0].Fd()), int(stdio[1].Fd()), int(stdio[2].Fd())}, opStarted, opFailed)
	closeFiles(stdio[:]...) // the guard holds its copies, and the child its own
	switch {
	case err != nil:
		err = failure.Wrap(failure.Process, err, "the launch guard did not start the child")
	case reply.Op == opFailed:
		err = startError(&os.PathError{Op: "fork/exec", Path: cmd.Path, Err: syscall.Errno(reply.Errno)})
	}
	if err != nil {
		t.forget()
		p.closePipes()
		return nil, err
	}
	p.root = proc{Pid: reply.Pid, PPid: g.pid, Group: reply.Pid, StartTime: reply.StartTime}
	t.root = p.root
	p.warnings = append(p.warnings, reply.Warnings...)
	return t, nil
}

// PrepareGuard starts this program's launch guard in the background, so
// that the first Start does not wait for its exec and start-up: a command
// that will launch a program calls it as soon as it knows. It never
// blocks and never fails; a guard that cannot start is reported by Start.
// Cancelling ctx abandons the start (a Start meanwhile waits for it to
// end, then starts one itself). Only Linux has a guard: elsewhere it does
// nothing.
func PrepareGuard(ctx context.Context) {
	go func() { _, _ = theGuard.get(ctx) }()
}
