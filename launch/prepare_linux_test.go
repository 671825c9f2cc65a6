package launch_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/launch"
)

// envPrepared runs TestPrepareGuard's case it names in the fresh process
// the test starts.
const envPrepared = "LAUNCH_TEST_PREPARED_GUARD"

// TestPrepareGuard: PrepareGuard starts the launch guard with no Start
// asked for, and the first Start then uses that guard; a prepared start
// whose context is cancelled leaves no guard running, and a later Start
// gets one. Each case runs in a fresh test process: this one's guard may
// be running already.
func TestPrepareGuard(t *testing.T) {
	switch os.Getenv(envPrepared) {
	case "":
		for _, name := range []string{"started", "cancelled"} {
			t.Run(name, func(t *testing.T) {
				cmd := exec.Command(os.Args[0], "-test.run=^TestPrepareGuard$", "-test.count=1", "-test.v")
				cmd.Env = append(os.Environ(), envPrepared+"="+name)
				out, err := cmd.CombinedOutput()
				require.NoError(t, err, "%s", out)
				require.Contains(t, string(out), "--- PASS: TestPrepareGuard", "the fresh process ran the test")
			})
		}
		return
	case "cancelled":
		require.Empty(t, children(t), "no guard before PrepareGuard")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		// PrepareGuard's start, waited for: the guard it execs is given up.
		err := launch.StartGuard(ctx)
		assert.Equal(t, failure.Cancelled, failure.KindOf(err), "%v", err)
		testkit.Eventually(t, "no guard left", deadline, func() bool { return len(children(t)) == 0 })
		p, err := launch.Start(context.Background(), selfPlan("0"), launch.Options{Env: testkit.ChildEnv("exit")})
		require.NoError(t, err)
		defer p.Close()
		_, err = p.Wait()
		require.NoError(t, err)
		assert.Equal(t, []int{p.Root().PPid}, children(t), "one guard, Start's")
		return
	}
	require.Empty(t, children(t), "no guard before PrepareGuard")
	launch.PrepareGuard(context.Background())
	var guards []int
	testkit.Eventually(t, "the prepared guard to run", deadline, func() bool {
		guards = children(t)
		return len(guards) == 1
	})
	p, err := launch.Start(context.Background(), selfPlan("0"), launch.Options{Env: testkit.ChildEnv("exit")})
	require.NoError(t, err)
	defer p.Close()
	_, err = p.Wait()
	require.NoError(t, err)
	assert.Equal(t, guards[0], p.Root().PPid, "Start used the prepared guard")
}

// children returns the PIDs of this process's launch guards, running or
// not yet reaped (a launched child's parent is the guard): its children
// whose argv[0] is the guard's. The others are short-lived: os/exec's
// first start forks a child that exits at once, to learn whether pidfds
// work.
func children(t *testing.T) []int {
	t.Helper()
	pids, ok := testkit.PIDs(func(_ int, dir string) bool {
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			return false // gone meanwhile
		}
		st, err := launch.ParseProcStat(stat)
		if err != nil || st.PPid != os.Getpid() {
			return false
		}
		cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		return err == nil && strings.HasPrefix(string(cmdline), launch.GuardName+"\x00")
	})
	require.True(t, ok, "/proc can be listed")
	return pids
}
