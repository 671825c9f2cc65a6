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

	"github.com/cursorkit/cursorkit/internal/proctest"
	"github.com/cursorkit/cursorkit/internal/wine"
	"github.com/cursorkit/cursorkit/launch"
)

func TestJobKillsTheTreeWhenTheSupervisorDies(t *testing.T) {
	marker := proctest.Marker("launch")
	// The intermediate supervisor is started without a job of ours, so only
	// the job it creates can take its tree down.
	sup := exec.Command(requireExe(t), append([]string{marker}, treeKinds...)...)
	sup.Env = proctest.Env(modeEnv, "supervisor")
	sup.Stderr = os.Stderr
	out, err := sup.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, sup.Start())
	lines := lineReader(out)
	treeLine := readLine(t, lines)
	treePid, err := strconv.Atoi(strings.TrimPrefix(treeLine, "tree "))
	require.NoError(t, err, treeLine)
	pids := readReady(t, lines)
	w := proctest.Watch(t, marker, append(pids, treePid))

	require.NoError(t, sup.Process.Kill()) // TerminateProcess: no cleanup code runs
	_ = sup.Wait()
	w.AssertGone(t, deadline)
}

func TestTreeWalkWithoutJob(t *testing.T) {
	marker := proctest.Marker("launch")
	p, err := launch.Start(context.Background(), selfPlan(append([]string{marker}, treeKinds...)...), launch.Options{Env: proctest.Env(modeEnv, "tree")})
	require.NoError(t, err)
	defer p.Close()
	pids := readReady(t, lineReader(p.Stdout()))
	w := proctest.Watch(t, marker, append(pids, p.Pid()))

	report, err := launch.TreeWalkKill(p)
	require.NoError(t, err)
	assert.Equal(t, launch.MethodTreeWalk, report.Method)
	assert.GreaterOrEqual(t, report.Swept, len(pids), "every reported descendant (and any helper such as conhost) is swept: %+v", report)
	waitExited(t, p)
	w.AssertGone(t, deadline)
}

func TestTaskkillFallback(t *testing.T) {
	wine.SkipIfWine(t, "taskkill has no /T")
	marker := proctest.Marker("launch")
	p, err := launch.Start(context.Background(), selfPlan(append([]string{marker}, treeKinds...)...), launch.Options{Env: proctest.Env(modeEnv, "tree")})
	require.NoError(t, err)
	defer p.Close()
	pids := readReady(t, lineReader(p.Stdout()))
	w := proctest.Watch(t, marker, append(pids, p.Pid()))

	report, err := launch.TaskkillFallbackKill(p)
	require.NoError(t, err)
	assert.True(t, report.Group, "taskkill /T /F succeeded: %+v", report)
	waitExited(t, p)
	w.AssertGone(t, deadline)
}

func TestJobReportAndTerminateAfterExit(t *testing.T) {
	p, err := launch.Start(context.Background(), selfPlan("0"), launch.Options{Env: proctest.Env(modeEnv, "exit")})
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
