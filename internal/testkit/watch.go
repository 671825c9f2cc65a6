package testkit

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordSlack is how much later than its record's modification time a
// process may seem to have started and still be the recorded one: the
// clocks of a file system and of process start times differ by a tick or
// so. A process at a recorded PID that started later is another one that
// reused the PID.
const recordSlack = 100 * time.Millisecond

// killedWithin bounds how long the cleanup waits for killed survivors to
// go, so the directories they ran from can be removed after it.
const killedWithin = 10 * time.Second

// procID tells a process from another that later got the same PID: its
// start stamp, exact and OS-specific (Linux: clock ticks since boot;
// Windows: creation time as a FILETIME; macOS: microseconds since the
// epoch; 0 where unknown). started converts it to a wall-clock time, within
// a tick or so.
type procID uint64

// Proc is a watched process.
type Proc struct {
	PID  int
	Role string // what the simulator recorded for it ("main", "linger", ...); "" when not recorded
}

// Watch is the survivor check of one test. It covers three sources of
// processes: those carrying its Marker in their argv (found by a process
// table scan on Linux only, so an escapee the test never heard of counts
// too), the PIDs given to Add (typically reported by a child), and those
// the simulator records in PIDDir. Each process is known by its PID and
// start time, taken while it ran, so a PID reused after it exited is never
// mistaken for it. When the test ends, whatever is still alive is killed
// (and logged), so a failing test leaves no process behind.
//
// Cleanups run last-in first-out: make the Watch after the directories its
// processes run from (TempDir, Install), so it kills them before those
// directories are removed.
type Watch struct {
	t      testing.TB
	marker string

	mu     sync.Mutex
	marked bool           // Marker was called: scan for it
	pidDir string         // made on first use; removed by the cleanup, after the kill
	known  map[int]*entry // by PID: added or recorded, with its identity
}

// entry is one added or recorded process.
type entry struct {
	id       procID
	gone     bool // gone when first seen: never alive again
	recorded bool
	role     string
}

// NewWatch returns a new survivor check for t.
func NewWatch(t testing.TB) *Watch {
	t.Helper()
	w := &Watch{
		t:      t,
		marker: fmt.Sprintf("testkit-marker-%d-%d-%x", os.Getpid(), time.Now().UnixNano(), rand.Uint64()),
		known:  map[int]*entry{},
	}
	t.Cleanup(w.cleanup)
	return w
}

// Marker returns a token unique to this watch, to put as one whole argument
// in the argv of every process of the tree under test. On Linux every live
// process that carries it is watched; elsewhere it is only a label (add the
// PIDs).
func (w *Watch) Marker() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.marked = true
	return w.marker
}

// Add watches the processes pids, typically reported by a child, and fails
// t unless each is running now.
func (w *Watch) Add(pids ...int) {
	w.t.Helper()
	for _, pid := range pids {
		require.True(w.t, w.add(pid), "process %d is not running", pid)
	}
}

// AddStarted watches a process the test itself has just started (its
// exec.Cmd's Process.Pid). One that has already exited, a zombie until
// the test waits for it, leaves nothing to watch: on a loaded machine a
// quick child may be done before this call.
func (w *Watch) AddStarted(pid int) {
	w.add(pid)
}

// add watches pid if it is running, and reports whether it was.
func (w *Watch) add(pid int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	id, ok := lookup(pid)
	if !ok {
		return false
	}
	if e := w.known[pid]; e != nil && !e.gone && e.id == id {
		return true // recorded too: keep its role
	}
	w.known[pid] = &entry{id: id}
	return true
}

// PIDDir returns a directory for agentsim.EnvPIDDir, made on first use: the
// simulator leaves there a file per process it starts (named by the PID,
// holding its role), and the watch covers each. It is removed when the test
// ends, after the survivors are killed.
func (w *Watch) PIDDir() string {
	w.t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pidDir == "" {
		w.pidDir = mkdirTemp(w.t)
	}
	return w.pidDir
}

// Recorded returns every process recorded in PIDDir so far, alive or not,
// by PID.
func (w *Watch) Recorded() []Proc {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.readPIDDir()
	var procs []Proc
	for pid, e := range w.known {
		if e.recorded {
			procs = append(procs, Proc{PID: pid, Role: e.role})
		}
	}
	slices.SortFunc(procs, func(a, b Proc) int { return a.PID - b.PID })
	return procs
}

// WaitRecorded waits up to within until PIDDir holds a process with role,
// returns it, and fails t if none comes.
func (w *Watch) WaitRecorded(role string, within time.Duration) Proc {
	w.t.Helper()
	var found Proc
	Eventually(w.t, fmt.Sprintf("a %q process to be recorded", role), within, func() bool {
		procs := w.Recorded()
		i := slices.IndexFunc(procs, func(p Proc) bool { return p.Role == role })
		if i >= 0 {
			found = procs[i]
		}
		return i >= 0
	})
	return found
}

// Alive returns the watched processes still running, by PID. A zombie
// (exited, not yet reaped) is not running.
func (w *Watch) Alive() []Proc {
	w.mu.Lock()
	defer w.mu.Unlock()
	live := w.alive()
	procs := make([]Proc, 0, len(live))
	for _, l := range live {
		procs = append(procs, l.Proc)
	}
	return procs
}

// live is a running watched process with its identity.
type live struct {
	Proc
	id procID
}

// alive is Alive with w.mu held.
func (w *Watch) alive() []live {
	w.readPIDDir()
	var procs []live
	for pid, e := range w.known {
		if e.gone {
			continue
		}
		if id, ok := lookup(pid); ok && id == e.id {
			procs = append(procs, live{Proc{PID: pid, Role: e.role}, id})
		}
	}
	if w.marked {
		for pid, id := range carrying(w.marker) {
			if !slices.ContainsFunc(procs, func(l live) bool { return l.PID == pid }) {
				procs = append(procs, live{Proc{PID: pid}, id})
			}
		}
	}
	slices.SortFunc(procs, func(a, b live) int { return a.PID - b.PID })
	return procs
}

// RequireGone fails t unless every watched process is gone within the
// given time (processes die asynchronously after a kill).
func (w *Watch) RequireGone(within time.Duration) {
	w.t.Helper()
	var alive []Proc
	if !poll(within, func() bool { alive = w.Alive(); return len(alive) == 0 }) {
		w.t.Fatalf("processes survived %v: %+v", within, alive)
	}
}

// Kill kills every watched process still running (never this one) and
// returns them. Kill does not wait for them to go.
func (w *Watch) Kill() []Proc {
	w.mu.Lock()
	defer w.mu.Unlock()
	var killed []Proc
	for _, l := range w.alive() {
		if l.PID == os.Getpid() {
			continue
		}
		if kill(l.PID, l.id) == nil {
			killed = append(killed, l.Proc)
		}
	}
	return killed
}

// cleanup kills the survivors, waits for them to go and removes PIDDir.
func (w *Watch) cleanup() {
	if killed := w.Kill(); len(killed) > 0 {
		w.t.Logf("testkit: killed processes that survived the test: %+v", killed)
		stillAlive := func(p Proc) bool { return slices.Contains(killed, p) }
		if !poll(killedWithin, func() bool { return !slices.ContainsFunc(w.Alive(), stillAlive) }) {
			w.t.Errorf("testkit: processes survived a kill for %v: %+v", killedWithin, w.Alive())
		}
	}
	w.mu.Lock()
	dir := w.pidDir
	w.mu.Unlock()
	if dir != "" {
		assert.NoError(w.t, removeAll(dir, unlockWithin), "removing the PID directory")
	}
}

// readPIDDir learns the processes newly recorded in PIDDir, with w.mu
// held. A record is complete once it ends with a newline; until then it is
// read again next time. The process at a recorded PID is the recorded one
// only if it started no later than the record was written.
func (w *Watch) readPIDDir() {
	if w.pidDir == "" {
		return
	}
	entries, _ := os.ReadDir(w.pidDir)
	for _, de := range entries {
		pid, err := strconv.Atoi(de.Name())
		if err != nil || de.IsDir() {
			continue
		}
		if e := w.known[pid]; e != nil && e.recorded {
			continue
		}
		path := filepath.Join(w.pidDir, de.Name())
		role, err := os.ReadFile(path)
		if err != nil || !strings.HasSuffix(string(role), "\n") {
			continue
		}
		info, err := os.Stat(path)
		if err != nil {
			continue
		}
		e := &entry{recorded: true, role: strings.TrimSpace(string(role))}
		if id, ok := lookup(pid); ok && !id.started().After(info.ModTime().Add(recordSlack)) {
			e.id = id
		} else {
			e.gone = true
		}
		w.known[pid] = e
	}
}
