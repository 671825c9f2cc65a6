package testkit_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

func TestAWatchSeesAKilledProcessGo(t *testing.T) {
	w := testkit.NewWatch(t)
	cmd, _ := startChild(t, self(t), w.Marker())
	w.Add(cmd.Process.Pid)
	assert.Equal(t, []testkit.Proc{{PID: cmd.Process.Pid}}, w.Alive())

	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait() // killed: the exit status says so
	w.RequireGone(waitLimit)
	assert.Empty(t, w.Alive())
	assert.Empty(t, w.Kill(), "nothing left to kill")
}

// A zombie (exited, not yet reaped) is gone: the watch does not wait for the
// test's own cmd.Wait.
func TestAnExitedProcessIsGoneBeforeItIsReaped(t *testing.T) {
	w := testkit.NewWatch(t)
	cmd, closeStdin := startChild(t, self(t), w.Marker())
	w.Add(cmd.Process.Pid)
	closeStdin() // it exits once its stdin ends
	w.RequireGone(waitLimit)
	require.NoError(t, cmd.Wait())
}

func TestAddFailsForAProcessThatIsNotRunning(t *testing.T) {
	cmd := exec.Command(self(t))
	cmd.Env = testkit.ChildEnv("exit")
	_ = cmd.Run()
	var inner fakeT
	func() {
		defer func() { recover() }() // require's FailNow ends the goroutine's work
		testkit.NewWatch(&inner).Add(cmd.Process.Pid)
	}()
	assert.True(t, inner.Failed(), "adding a process that has exited fails the test")
	inner.cleanup()
}

// A process at a watched PID that started at another time is another
// process (the PID was reused): it is not alive for the watch, and the
// watch never kills it.
func TestAReusedPIDIsNotTheWatchedProcess(t *testing.T) {
	w := testkit.NewWatch(t)
	cmd, closeStdin := startChild(t, self(t))
	w.Add(cmd.Process.Pid)
	w.ForgetIdentity(cmd.Process.Pid)
	assert.Empty(t, w.Alive())
	assert.Empty(t, w.Kill())
	other := testkit.NewWatch(t)
	other.Add(cmd.Process.Pid)
	assert.Len(t, other.Alive(), 1, "the process was not killed")
	closeStdin()
	require.NoError(t, cmd.Wait())
}

// A record written before the process at its PID started belongs to an
// earlier process that had that PID.
func TestARecordOlderThanTheProcessAtItsPIDIsGone(t *testing.T) {
	w := testkit.NewWatch(t)
	cmd, closeStdin := startChild(t, self(t))
	record := filepath.Join(w.PIDDir(), strconv.Itoa(cmd.Process.Pid))
	require.NoError(t, os.WriteFile(record, []byte("main\n"), 0o644))
	hourAgo := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(record, hourAgo, hourAgo))
	assert.Equal(t, []testkit.Proc{{PID: cmd.Process.Pid, Role: "main"}}, w.Recorded())
	assert.Empty(t, w.Alive())
	assert.Empty(t, w.Kill())
	closeStdin()
	require.NoError(t, cmd.Wait(), "it was not killed")
}

func TestRecordedAndAlive(t *testing.T) {
	bin := testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator)
	w := testkit.NewWatch(t)
	// Unfinished records, other files and directories are not processes.
	require.NoError(t, os.WriteFile(filepath.Join(w.PIDDir(), "not-a-pid"), []byte("x\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.PIDDir(), "1"), nil, 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(w.PIDDir(), "2"), 0o755))

	// A process that has exited (and been reaped) is recorded but not alive.
	done := exec.Command(bin, "--version")
	done.Env = testkit.ChildEnv(testkit.Simulator, agentsim.EnvPIDDir+"="+w.PIDDir())
	require.NoError(t, done.Run())
	gone := done.Process.Pid
	// A running one is both.
	running := exec.Command(bin, "--version")
	running.Env = testkit.ChildEnv(testkit.Simulator, agentsim.EnvPIDDir+"="+w.PIDDir(),
		agentsim.Scenario(agentsim.ScenarioSlowVersion), agentsim.EnvDelay+"=10m")
	require.NoError(t, running.Start())
	t.Cleanup(func() { _ = running.Wait() })
	worker := w.WaitRecorded("slow-version", waitLimit)
	main := w.WaitRecorded("main", waitLimit)
	assert.Contains(t, []int{gone, running.Process.Pid}, main.PID)

	assert.ElementsMatch(t, []testkit.Proc{{PID: gone, Role: "main"}, {PID: running.Process.Pid, Role: "main"}, worker}, w.Recorded())
	assert.ElementsMatch(t, []testkit.Proc{{PID: running.Process.Pid, Role: "main"}, worker}, w.Alive())

	// Kill kills what is alive and says so; then nothing is.
	assert.ElementsMatch(t, []testkit.Proc{{PID: running.Process.Pid, Role: "main"}, worker}, w.Kill())
	w.RequireGone(waitLimit)
}

func TestWaitRecordedFailsWhenNothingComes(t *testing.T) {
	var inner fakeT
	func() {
		defer func() { recover() }()
		w := testkit.NewWatch(&inner)
		w.PIDDir()
		w.WaitRecorded("main", 10*time.Millisecond)
	}()
	assert.True(t, inner.Failed())
	assert.Contains(t, inner.messages(), `"main" process to be recorded`)
	inner.cleanup()
}

func TestRequireGoneNamesTheSurvivors(t *testing.T) {
	cmd, closeStdin := startChild(t, self(t))
	var inner fakeT
	func() {
		defer func() { recover() }()
		w := testkit.NewWatch(&inner)
		w.Add(cmd.Process.Pid)
		w.RequireGone(10 * time.Millisecond)
	}()
	assert.True(t, inner.Failed())
	assert.Contains(t, inner.messages(), fmt.Sprintf("processes survived 10ms: [{PID:%d Role:}]", cmd.Process.Pid))
	closeStdin()
	require.NoError(t, cmd.Wait(), "the survivor exited by itself: RequireGone kills nothing")
	inner.cleanup()
}

// Whatever a test leaves running is killed when it ends, before the
// directories it ran from are removed (which Windows refuses while the
// image runs), so a failing test leaks nothing.
func TestTheCleanupKillsSurvivorsBeforeTheirDirectoryGoes(t *testing.T) {
	var dir string
	var left []*exec.Cmd
	t.Run("leaky", func(t *testing.T) {
		dir = testkit.TempDir(t)
		bin := testkit.Install(t, dir, "cursor-agent", testkit.Simulator)
		w := testkit.NewWatch(t)
		added, _ := startLeaky(t, testkit.Install(t, dir, "child", "stdin"))
		w.Add(added.Process.Pid)
		sim := exec.Command(bin, "--print", "--output-format", "stream-json", "--trust")
		sim.Env = testkit.ChildEnv(testkit.Simulator, agentsim.EnvPIDDir+"="+w.PIDDir(),
			agentsim.Scenario(agentsim.ScenarioLinger), agentsim.EnvHangLimit+"=2m")
		sim.Stdin = strings.NewReader("the prompt")
		require.NoError(t, sim.Start())
		w.WaitRecorded("linger", waitLimit)
		left = append(left, added, sim)
	})
	_, err := os.Lstat(dir)
	assert.True(t, os.IsNotExist(err), "the directory is gone after the subtest: %v", err)
	for _, cmd := range left {
		assert.Error(t, cmd.Wait(), "killed")
	}
}

// fakeT is a testing.TB whose failures and cleanups the test inspects.
type fakeT struct {
	testing.TB // nil: only the methods below are called
	failed     bool
	logs       []string
	cleanups   []func()
}

func (f *fakeT) Helper()                           {}
func (f *fakeT) Name() string                      { return "fake" }
func (f *fakeT) Cleanup(fn func())                 { f.cleanups = append(f.cleanups, fn) }
func (f *fakeT) Errorf(format string, args ...any) { f.failed = true; f.Logf(format, args...) }
func (f *fakeT) Fatalf(format string, args ...any) { f.Errorf(format, args...); f.FailNow() }
func (f *fakeT) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}
func (f *fakeT) FailNow()         { f.failed = true; panic("FailNow") }
func (f *fakeT) Failed() bool     { return f.failed }
func (f *fakeT) messages() string { return strings.Join(f.logs, "\n") }

func (f *fakeT) cleanup() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

// TestAddStartedTakesAnExitedChild: a child that exited before it was
// added (a zombie until its Wait) is no failure of AddStarted, and leaves
// nothing to watch; a running one is watched as Add watches it.
func TestAddStartedTakesAnExitedChild(t *testing.T) {
	exited := exec.Command(os.Args[0], "-test.run=^$")
	require.NoError(t, exited.Start())
	require.Eventually(t, func() bool { return !testkit.Running(exited.Process.Pid) },
		10*time.Second, 5*time.Millisecond, "the child exits (a zombie until waited for)")
	w := testkit.NewWatch(t)
	w.AddStarted(exited.Process.Pid)
	require.NoError(t, exited.Wait())
}
