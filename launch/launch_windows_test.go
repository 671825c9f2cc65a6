package launch_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/launch"
)

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
