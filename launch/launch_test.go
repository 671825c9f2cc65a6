package launch_test

import (
	"context"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/launch"
	"github.com/cursorkit/cursorkit/shim"
)

func TestStartRejectsBadInputBeforeStarting(t *testing.T) {
	dir := testkit.TempDir(t)
	notDir := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o600))
	touched := filepath.Join(dir, "started")

	tests := []struct {
		name string
		plan shim.Command
		dir  string
		kind failure.Kind
	}{
		{"missing dir", selfPlan(touched), filepath.Join(dir, "missing"), failure.Input},
		{"dir is a file", selfPlan(touched), notDir, failure.Input},
		{"no program", shim.Command{}, "", failure.Input},
		{"relative program", shim.Command{Program: filepath.Join("bin", "cursor-agent"), Args: []string{"cursor-agent"}}, "", failure.Input},
		{"program is a directory", shim.Command{Program: dir, Args: []string{dir}}, "", failure.Setup},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := launch.Start(context.Background(), tc.plan, launch.Options{Dir: tc.dir, Env: testkit.ChildEnv("touch")})
			require.Error(t, err)
			assert.Nil(t, p)
			assert.Equal(t, tc.kind, failure.KindOf(err))
			assert.NoFileExists(t, touched, "the child must not have started")
		})
	}
}

func TestStartMissingProgram(t *testing.T) {
	missing := filepath.Join(testkit.TempDir(t), "cursor-agent")
	p, err := launch.Start(context.Background(), shim.Command{Program: missing, Args: []string{missing}}, launch.Options{})
	require.Error(t, err)
	assert.Nil(t, p)
	assert.Equal(t, failure.MissingCLI, failure.KindOf(err))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestStartCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p, err := launch.Start(ctx, selfPlan(), launch.Options{Env: testkit.ChildEnv("echo")})
	require.Error(t, err)
	assert.Nil(t, p)
	assert.Equal(t, failure.Cancelled, failure.KindOf(err))
}

func TestPromptTravelsOnStdin(t *testing.T) {
	tests := []struct {
		name  string
		stdin io.Reader
		want  string
	}{
		{"prompt", strings.NewReader("explain this repository\nin two lines"), "explain this repository\nin two lines"},
		{"nil stdin is closed at once", nil, ""},
		{"larger than a pipe buffer", strings.NewReader(strings.Repeat("0123456789abcdef", 64<<10)), strings.Repeat("0123456789abcdef", 64<<10)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := launch.Start(context.Background(), selfPlan(), launch.Options{Env: testkit.ChildEnv("echo"), Stdin: tc.stdin})
			require.NoError(t, err)
			defer p.Close()
			out, err := io.ReadAll(p.Stdout())
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(out))
			status, err := p.Wait()
			require.NoError(t, err)
			assert.True(t, status.Success(), status.String())
		})
	}
}

func TestWorkingDirectory(t *testing.T) {
	dir := testkit.TempDir(t)
	p, err := launch.Start(context.Background(), selfPlan("created-here"), launch.Options{Dir: dir, Env: testkit.ChildEnv("touch")})
	require.NoError(t, err)
	defer p.Close()
	status, err := p.Wait()
	require.NoError(t, err)
	require.True(t, status.Success(), status.String())
	assert.FileExists(t, filepath.Join(dir, "created-here"))
}

func TestExitStatus(t *testing.T) {
	for _, code := range []int{0, 1, 3, 42} {
		p, err := launch.Start(context.Background(), selfPlan(strconv.Itoa(code)), launch.Options{Env: testkit.ChildEnv("exit")})
		require.NoError(t, err)
		status, err := p.Wait()
		require.NoError(t, err)
		assert.Equal(t, launch.ExitStatus{Code: code}, status)
		assert.Equal(t, code == 0, status.Success())
		again, err := p.Wait()
		require.NoError(t, err)
		assert.Equal(t, status, again, "Wait is repeatable")
		require.NoError(t, p.Close())
	}
}

func TestKillTreeKillsEveryGrandchild(t *testing.T) {
	w := testkit.NewWatch(t)
	marker := w.Marker()
	p, err := launch.Start(context.Background(), selfPlan(append([]string{marker}, treeKinds...)...), launch.Options{Env: testkit.ChildEnv("tree")})
	require.NoError(t, err)
	defer p.Close()
	pids := readReady(t, lineReader(p.Stdout()))
	require.Len(t, pids, len(treeKinds)+strings.Count(strings.Join(treeKinds, " "), "cmd"))
	w.Add(append(pids, p.Pid())...)

	report, err := p.KillTree()
	require.NoError(t, err)
	assert.True(t, report.Group, "%+v", report)
	waitExited(t, p)
	w.RequireGone(deadline)

	_, err = p.KillTree()
	assert.NoError(t, err, "KillTree is idempotent")
}

func TestWaitDoesNotWaitForPipeHolders(t *testing.T) {
	w := testkit.NewWatch(t)
	marker := w.Marker()
	// The child exits at once; its grandchild lives on holding the stderr
	// pipe's write end.
	p, err := launch.Start(context.Background(), selfPlan(marker, "group", "exit"), launch.Options{Env: testkit.ChildEnv("tree")})
	require.NoError(t, err)
	defer p.Close()
	pids := readReady(t, lineReader(p.Stdout()))
	w.Add(pids...)
	status := waitExited(t, p)
	assert.True(t, status.Success(), status.String())

	_, err = p.KillTree()
	require.NoError(t, err)
	w.RequireGone(deadline)
}

func TestCloseKillsWhatIsLeft(t *testing.T) {
	w := testkit.NewWatch(t)
	marker := w.Marker()
	p, err := launch.Start(context.Background(), selfPlan(append([]string{marker}, treeKinds...)...), launch.Options{Env: testkit.ChildEnv("tree")})
	require.NoError(t, err)
	pids := readReady(t, lineReader(p.Stdout()))
	w.Add(append(pids, p.Pid())...)
	require.NoError(t, p.Close())
	w.RequireGone(deadline)
	require.NoError(t, p.Close(), "Close is idempotent")
	select {
	case <-p.Exited():
	default:
		t.Fatal("Close returned before the child's exit was observed")
	}
	// The tree is gone and every handle released: a late KillTree (a stop
	// racing the turn's end) has nothing to do and is no error.
	_, err = p.KillTree()
	require.NoError(t, err, "KillTree after Close")
}

// waitExited calls Wait with a deadline.
func waitExited(t *testing.T, p *launch.Process) launch.ExitStatus {
	t.Helper()
	type result struct {
		status launch.ExitStatus
		err    error
	}
	done := make(chan result, 1)
	go func() {
		s, err := p.Wait()
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		require.NoError(t, r.err)
		return r.status
	case <-time.After(deadline):
		t.Fatal("Wait did not return")
	}
	return launch.ExitStatus{}
}

// TestNothingOutlivesAKilledSupervisor: when the program that launched a
// tree dies without any cleanup of its own (SIGKILL, TerminateProcess),
// the tree dies too: the Job Object on Windows, the launch guard on Linux
// (docs/architecture.md "The launch guard"), double-forked daemons and
// empty-environment ones included.
func TestNothingOutlivesAKilledSupervisor(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("macOS has neither a job object nor a launch guard (docs/architecture.md)")
	}
	w := testkit.NewWatch(t)
	marker := w.Marker()
	// The intermediate supervisor is started as a plain child of the test,
	// so only what it set up itself can take its tree down.
	sup := exec.Command(os.Args[0], append([]string{marker}, supervisorKinds...)...)
	sup.Env = testkit.ChildEnv("supervisor")
	sup.Stderr = os.Stderr
	out, err := sup.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, sup.Start())
	lines := lineReader(out)
	treeLine := readLine(t, lines)
	treePid, err := strconv.Atoi(strings.TrimPrefix(treeLine, "tree "))
	require.NoError(t, err, treeLine)
	pids := readReady(t, lines)
	w.Add(append(pids, treePid)...)

	require.NoError(t, sup.Process.Kill()) // SIGKILL, TerminateProcess: no cleanup code runs
	killed := time.Now()
	_ = sup.Wait()
	w.RequireGone(deadline)
	t.Logf("the tree (%d processes) was gone %v after the supervisor was killed", len(pids)+1, time.Since(killed))
}

func TestConcurrentControlIsSafe(t *testing.T) {
	before := runtime.NumGoroutine()
	w := testkit.NewWatch(t)
	marker := w.Marker()
	p, err := launch.Start(context.Background(), selfPlan(append([]string{marker}, treeKinds...)...), launch.Options{Env: testkit.ChildEnv("tree"), Stdin: strings.NewReader("ignored")})
	require.NoError(t, err)
	pids := readReady(t, lineReader(p.Stdout()))
	w.Add(append(pids, p.Pid())...)

	calls := []func() error{
		func() error { _, err := p.Wait(); return err },
		func() error { _, err := p.KillTree(); return err },
		func() error { _ = p.Terminate(); return nil }, // may race with the exit: either outcome is fine
		p.Close,
		func() error { _, err := p.KillTree(); return err },
		p.Close,
		func() error { _, err := p.Wait(); return err },
	}
	errs := make(chan error, len(calls))
	for _, call := range calls {
		go func() { errs <- call() }()
	}
	timeout := time.After(deadline)
	for range calls {
		select {
		case err := <-errs:
			assert.NoError(t, err)
		case <-timeout:
			t.Fatal("a concurrent call did not return")
		}
	}
	w.RequireGone(deadline)
	testkit.Eventually(t, "the test's goroutines to end", deadline, func() bool { return runtime.NumGoroutine() <= before })
}
