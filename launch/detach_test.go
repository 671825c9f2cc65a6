package launch_test

import (
	"bufio"
	"context"
	"fmt"
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
	"github.com/cursorkit/cursorkit/internal/procid"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/launch"
	"github.com/cursorkit/cursorkit/shim"
)

// detachedBy is what a "detach" caller reported: the sleeper it detached.
type detachedBy struct {
	id       procid.Identity
	warnings string
}

// startDetacher starts a caller that detaches a sleeper (its output to
// out), reads its report and returns it with the running caller; with
// "exit" the caller exits by itself after the report.
func startDetacher(t *testing.T, mode, out string) (*exec.Cmd, detachedBy) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, mode, out)
	cmd.Env = testkit.ChildEnv("detach")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- strings.TrimRight(line, "\r\n")
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(deadline):
		_ = cmd.Process.Kill()
		t.Fatal("the caller did not report its detached child")
	}
	var pid int
	var created, warnings string
	_, err = fmt.Sscanf(line, "detached %d %s %q", &pid, &created, &warnings)
	require.NoError(t, err, "report %q", line)
	at, err := time.Parse(time.RFC3339Nano, created)
	require.NoError(t, err)
	return cmd, detachedBy{id: procid.Identity{PID: pid, Created: at}, warnings: warnings}
}

// waitCmd waits for cmd to exit within the deadline.
func waitCmd(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(deadline):
		t.Fatalf("pid %d did not exit within %v", cmd.Process.Pid, deadline)
	}
}

func TestADetachedChildSurvivesItsCaller(t *testing.T) {
	for _, end := range callerEnds {
		t.Run(end, func(t *testing.T) {
			ctx := context.Background()
			dir := testkit.TempDir(t)
			w := testkit.NewWatch(t)
			out := filepath.Join(dir, "sleeper out.txt")
			mode := "exit"
			if end == "sigkill" {
				mode = "hold"
			}
			caller, d := startDetacher(t, mode, out)
			w.Add(d.id.PID)
			assert.Empty(t, d.warnings)
			if end == "sigkill" {
				require.NoError(t, caller.Process.Kill())
			}
			waitCmd(t, caller)

			// The sleeper ran (its output went to the named file) and is
			// still alive, by identity, after its caller is gone.
			testkit.Eventually(t, "the sleeper's ready line", deadline, func() bool {
				b, _ := os.ReadFile(out)
				return strings.Contains(string(b), "ready "+strconv.Itoa(d.id.PID))
			})
			alive, err := d.id.Alive(ctx)
			require.NoError(t, err)
			require.True(t, alive, "the detached child died with its caller")
			checkDetached(t, d.id.PID)

			require.NoError(t, d.id.Kill(ctx))
			w.RequireGone(deadline)
			alive, err = d.id.Alive(ctx)
			require.NoError(t, err)
			assert.False(t, alive)
		})
	}
}

func TestStartDetachedRefusesBadPlans(t *testing.T) {
	ctx := context.Background()
	dir := testkit.TempDir(t)
	tests := []struct {
		name string
		plan shim.Command
		opts launch.DetachOptions
		kind failure.Kind
	}{
		{"no program", shim.Command{}, launch.DetachOptions{}, failure.Input},
		{"relative program", shim.Command{Program: "prog"}, launch.DetachOptions{}, failure.Input},
		{"missing program", shim.Command{Program: filepath.Join(dir, "absent")}, launch.DetachOptions{}, failure.MissingCLI},
		{"missing dir", selfPlan(), launch.DetachOptions{Dir: filepath.Join(dir, "absent")}, failure.Input},
		{"unopenable output", selfPlan(), launch.DetachOptions{Stdout: filepath.Join(dir, "absent", "out")}, failure.Input},
		{"program is a directory", shim.Command{Program: dir, Args: []string{dir}}, launch.DetachOptions{}, failure.Setup},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := launch.StartDetached(ctx, tt.plan, tt.opts)
			require.Error(t, err)
			assert.Equal(t, tt.kind, failure.KindOf(err), "%v", err)
		})
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := launch.StartDetached(cancelled, selfPlan(), launch.DetachOptions{})
	assert.Equal(t, failure.Cancelled, failure.KindOf(err))
}

func TestADetachedChildGetsACleanEnvironment(t *testing.T) {
	ctx := context.Background()
	dir := testkit.TempDir(t)
	out := filepath.Join(dir, "env.txt")
	env := testkit.ChildEnv("env", "CURSORKIT_TOKEN=secret", "KEEP_ME=1")
	d, err := launch.StartDetached(ctx, selfPlan(), launch.DetachOptions{Env: env, Stdout: out, Dir: dir})
	require.NoError(t, err)
	assert.Equal(t, d.PID, d.Identity.PID)
	testkit.Eventually(t, "the child's environment", deadline, func() bool {
		alive, err := d.Alive(ctx)
		b, _ := os.ReadFile(out)
		return err == nil && !alive && strings.Contains(string(b), "KEEP_ME=1")
	})
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "CURSORKIT_TOKEN")
	assert.NotContains(t, string(b), launch.LaunchIDEnv+"=", "a detached child belongs to no tree")
}

// A caller that itself runs under a launch (Linux: the launch guard;
// Windows: a kill-on-close job without breakaway) cannot take its detached
// child out of that tree: the outer launcher's promise wins, and closing
// the caller's Process kills the detached child too.
func TestADetachedChildOfALaunchedCallerDiesWithItsTree(t *testing.T) {
	ctx := context.Background()
	dir := testkit.TempDir(t)
	w := testkit.NewWatch(t)
	out := filepath.Join(dir, "out.txt")
	p, err := launch.Start(ctx, selfPlan("exit", out), launch.Options{Env: testkit.ChildEnv("detach")})
	require.NoError(t, err)
	defer p.Close()
	line, err := bufio.NewReader(p.Stdout()).ReadString('\n')
	require.NoError(t, err)
	var pid int
	var created, warnings string
	_, err = fmt.Sscanf(strings.TrimRight(line, "\r\n"), "detached %d %s %q", &pid, &created, &warnings)
	require.NoError(t, err, "report %q", line)
	w.Add(pid)
	if runtime.GOOS == "windows" {
		assert.Contains(t, warnings, "no_breakaway")
	} else {
		assert.Empty(t, warnings)
	}
	require.NoError(t, p.Close())
	w.RequireGone(deadline)
}
