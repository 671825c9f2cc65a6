package launch_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/launch"
)

// envPrepared runs TestPrepareGuard's body in the fresh process it starts.
const envPrepared = "LAUNCH_TEST_PREPARED_GUARD"

// TestPrepareGuard: PrepareGuard starts the launch guard with no Start
// asked for, and the first Start then uses that guard. It runs in a fresh
// test process: this one's guard may be running already.
func TestPrepareGuard(t *testing.T) {
	if os.Getenv(envPrepared) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPrepareGuard$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), envPrepared+"=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "--- PASS: TestPrepareGuard", "the fresh process ran the test")
		return
	}
	require.Zero(t, guardChild(t), "no guard before PrepareGuard")
	launch.PrepareGuard(context.Background())
	var guard int
	testkit.Eventually(t, "the prepared guard to run", deadline, func() bool {
		guard = guardChild(t)
		return guard != 0
	})
	p, err := launch.Start(context.Background(), selfPlan("0"), launch.Options{Env: testkit.ChildEnv("exit")})
	require.NoError(t, err)
	defer p.Close()
	_, err = p.Wait()
	require.NoError(t, err)
	assert.Equal(t, guard, p.Root().PPid, "Start used the prepared guard")
}

// guardChild returns the PID of this process's launch guard, 0 when it
// has none.
func guardChild(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		st, err := launch.ParseProcStat(stat)
		if err != nil || st.PPid != os.Getpid() {
			continue
		}
		if argv, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && bytes.HasPrefix(argv, []byte("cursorkit-launch-guard\x00")) {
			return pid
		}
	}
	return 0
}
