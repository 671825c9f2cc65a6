package supervise

import (
	"errors"
	"github.com/cursorkit/cursorkit/failure"
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// fakeChild is an in-memory child: the test writes its stdout and stderr
// and decides how it reacts to terminate and killTree.
type fakeChild struct {
	outR, errR *io.PipeReader
	outW, errW *io.PipeWriter

	ignoreTerm bool // terminate is a no-op, as for a child trapping SIGTERM
	holdPipes  bool // an escapee keeps stdout/stderr open after any kill

	exitOnce   sync.Once
	exitDone   chan struct{}
	status     exitStatus
	terminated atomic.Int32
	killed     atomic.Int32
	closed     atomic.Int32
	launchWarn []failure.Warning
}

func newFake() *fakeChild {
	f := &fakeChild{exitDone: make(chan struct{})}
	f.outR, f.outW = io.Pipe()
	f.errR, f.errW = io.Pipe()
	return f
}

// exit makes the direct child exit with st; unless holdPipes, its pipes
// close as they would when the last writer goes.
func (f *fakeChild) exit(st exitStatus) {
	f.exitOnce.Do(func() {
		f.status = st
		if !f.holdPipes {
			f.closePipes()
		}
		close(f.exitDone)
	})
}

func (f *fakeChild) closePipes() {
	_ = f.outW.Close()
	_ = f.errW.Close()
}

func (f *fakeChild) stdout() io.ReadCloser       { return f.outR }
func (f *fakeChild) stderr() io.ReadCloser       { return f.errR }
func (f *fakeChild) warnings() []failure.Warning { return f.launchWarn }
func (f *fakeChild) pid() int                    { return 4242 }

func (f *fakeChild) wait() exitStatus {
	<-f.exitDone
	return f.status
}

func (f *fakeChild) terminate() error {
	f.terminated.Add(1)
	select {
	case <-f.exitDone:
		return errors.Join(errors.New("no such process"), os.ErrProcessDone)
	default:
	}
	if !f.ignoreTerm {
		f.exit(exitStatus{code: -1, signal: 15})
	}
	return nil
}

func (f *fakeChild) killTree() error {
	f.killed.Add(1)
	f.exit(exitStatus{code: -1, signal: 9})
	return nil
}

func (f *fakeChild) close() error {
	f.closed.Add(1)
	f.exit(exitStatus{code: -1, signal: 9})
	return nil
}
