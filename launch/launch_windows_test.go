package launch_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

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

// TestNothingOutlivesAKillAtCreation: the program that launches is killed
// (TerminateProcess, no cleanup) in the window between CreateProcess and
// the child's start, where a child assigned to its job only after
// CreateProcess would stay, suspended, outside any job for good. Created
// inside its job (PROC_THREAD_ATTRIBUTE_JOB_LIST), it dies with the job's
// last handle, that is with the killed program.
func TestNothingOutlivesAKillAtCreation(t *testing.T) {
	w := testkit.NewWatch(t)
	marker := w.Marker()
	sup := exec.Command(os.Args[0], "job-list", marker)
	sup.Env = testkit.ChildEnv("paused-supervisor")
	sup.Stderr = os.Stderr
	out, err := sup.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, sup.Start())
	line := readLine(t, lineReader(out))
	pid, err := strconv.Atoi(strings.TrimPrefix(line, "created "))
	require.NoError(t, err, line)
	w.Add(pid) // created, suspended, not yet resumed

	require.NoError(t, sup.Process.Kill())
	killed := time.Now()
	_ = sup.Wait()
	w.RequireGone(deadline)
	t.Logf("the child created at the kill was gone %v after it", time.Since(killed))
}

// TestFallbackAssignsTheJobAfterCreation: without
// PROC_THREAD_ATTRIBUTE_JOB_LIST (Windows before 10 1607) the child is
// assigned to its job after CreateProcess, before it runs, and the launch
// says so; the job still holds the whole tree.
func TestFallbackAssignsTheJobAfterCreation(t *testing.T) {
	w := testkit.NewWatch(t)
	marker := w.Marker()
	paused := 0
	p, err := launch.StartPaused(context.Background(), selfPlan(append([]string{marker}, treeKinds...)...),
		launch.Options{Env: testkit.ChildEnv("tree")}, true, func(pid int) { paused = pid })
	require.NoError(t, err)
	defer p.Close()
	assert.Equal(t, p.Pid(), paused, "the pause saw the child")
	require.Len(t, p.Warnings(), 1)
	assert.Equal(t, launch.WarnJobAfterStart, p.Warnings()[0].Code)
	pids := readReady(t, lineReader(p.Stdout()))
	w.Add(append(pids, p.Pid())...)

	report, err := p.KillTree()
	require.NoError(t, err)
	assert.Equal(t, launch.KillReport{Method: launch.MethodJobObject, Group: true}, report)
	waitExited(t, p)
	w.RequireGone(deadline)
}
