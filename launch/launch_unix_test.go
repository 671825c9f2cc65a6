//go:build unix

package launch_test

import (
	"context"
	"io"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/launch"
)

func TestChildLeadsItsOwnProcessGroup(t *testing.T) {
	p, err := launch.Start(context.Background(), selfPlan("m"), launch.Options{Env: testkit.ChildEnv("sleep")})
	require.NoError(t, err)
	defer p.Close()
	readLine(t, lineReader(p.Stdout()))
	pgid, err := syscall.Getpgid(p.Pid())
	require.NoError(t, err)
	assert.Equal(t, p.Pid(), pgid)
	assert.NotEqual(t, syscall.Getpgrp(), pgid)
	assert.Equal(t, p.Pid(), p.Root().Pid)
	if runtime.GOOS != "linux" {
		assert.Equal(t, os.Getpid(), p.Root().PPid)
	} // on Linux the parent is the launch guard (launch_linux_test.go)
}

func TestTerminateSignalsTheGroup(t *testing.T) {
	w := testkit.NewWatch(t)
	marker := w.Marker()
	p, err := launch.Start(context.Background(), selfPlan(marker, "group", "group"), launch.Options{Env: testkit.ChildEnv("tree")})
	require.NoError(t, err)
	defer p.Close()
	pids := readReady(t, lineReader(p.Stdout()))
	w.Add(pids...)

	require.NoError(t, p.Terminate())
	status := waitExited(t, p)
	assert.Equal(t, launch.ExitStatus{Code: -1, Signal: int(syscall.SIGTERM), Signaled: true}, status)
	assert.Equal(t, "signal 15", status.String())
	w.RequireGone(deadline)
}

func TestKilledStatusAndTerminateAfterExit(t *testing.T) {
	p, err := launch.Start(context.Background(), selfPlan("m"), launch.Options{Env: testkit.ChildEnv("sleep")})
	require.NoError(t, err)
	readLine(t, lineReader(p.Stdout()))
	_, err = p.KillTree()
	require.NoError(t, err)
	status := waitExited(t, p)
	assert.Equal(t, launch.ExitStatus{Code: -1, Signal: int(syscall.SIGKILL), Signaled: true}, status)
	require.NoError(t, p.Close())

	err = p.Terminate()
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrProcessDone)
	report, err := p.KillTree()
	require.NoError(t, err, "KillTree after Close is harmless")
	assert.False(t, report.Group, "a reaped group is not signalled: %+v", report)
}

// TestEnvironmentBytesReachTheChildExactly: POSIX allows any byte but NUL in
// an environment value, and the child gets exactly those bytes (through the
// launch guard on Linux too).
func TestEnvironmentBytesReachTheChildExactly(t *testing.T) {
	t.Setenv(testkit.RoleEnv, "env")
	const odd = "ODD_BYTES=\xff\xfe-\xc3(-\xed\xa0\x80-ok"
	p, err := launch.Start(context.Background(), selfPlan(), launch.Options{Env: append(testkit.ChildEnv("env"), odd)})
	require.NoError(t, err)
	defer p.Close()
	out, err := io.ReadAll(p.Stdout())
	require.NoError(t, err)
	status, err := p.Wait()
	require.NoError(t, err)
	require.True(t, status.Success(), status.String())
	assert.Contains(t, strings.Split(string(out), "\n"), odd)
}
