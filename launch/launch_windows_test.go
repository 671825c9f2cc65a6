package launch_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/launch"
)

func TestJobKillsTheTreeWhenTheSupervisorDies(t *testing.T) {
	w := testkit.NewWatch(t)
	marker := w.Marker()
	// The intermediate supervisor is started without a job of ours, so only
	// the job it creates can take its tree down.
	sup := exec.Command(requireExe(t), append([]string{marker}, treeKinds...)...)
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

	require.NoError(t, sup.Process.Kill()) // TerminateProcess: no cleanup code runs
	_ = sup.Wait()
	w.RequireGone(deadline)
}

func TestTreeWalkWithoutJob(t *testing.T) {
	w := testkit.NewWatch(t)
	marker := w.Marker()
	p, err := launch.Start(context.Background(), selfPlan(append([]string{marker}, treeKinds...)...), launch.Options{Env: testkit.ChildEnv("tree")})
	require.NoError(t, err)
	defer p.Close()
	pids := readReady(t, lineReader(p.Stdout()))
	w.Add(append(pids, p.Pid())...)

	report, err := launch.TreeWalkKill(p)
	require.NoError(t, err)
	assert.Equal(t, launch.MethodTreeWalk, report.Method)
	assert.GreaterOrEqual(t, report.Swept, len(pids), "every reported descendant (and any helper such as conhost) is swept: %+v", report)
	waitExited(t, p)
	w.RequireGone(deadline)
}

func TestTaskkillFallback(t *testing.T) {
	testkit.SkipIfWine(t, "taskkill has no /T")
	w := testkit.NewWatch(t)
	marker := w.Marker()
	p, err := launch.Start(context.Background(), selfPlan(append([]string{marker}, treeKinds...)...), launch.Options{Env: testkit.ChildEnv("tree")})
	require.NoError(t, err)
	defer p.Close()
	pids := readReady(t, lineReader(p.Stdout()))
	w.Add(append(pids, p.Pid())...)

	report, err := launch.TaskkillFallbackKill(p)
	require.NoError(t, err)
	assert.True(t, report.Group, "taskkill /T /F succeeded: %+v", report)
	waitExited(t, p)
	w.RequireGone(deadline)
}

func TestJobReportAndTerminateAfterExit(t *testing.T) {
	p, err := launch.Start(context.Background(), selfPlan("0"), launch.Options{Env: testkit.ChildEnv("exit")})
	require.NoError(t, err)
	waitExited(t, p)
	assert.Empty(t, p.Warnings(), "the child ran in a job")
	report, err := p.KillTree()
	require.NoError(t, err)
	assert.Equal(t, launch.KillReport{Method: launch.MethodJobObject, Group: true}, report)
	err = p.Terminate()
	assert.ErrorIs(t, err, os.ErrProcessDone)
	require.NoError(t, p.Close())
}

// requireExe returns the test binary's path.
func requireExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return exe
}
