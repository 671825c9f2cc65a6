package launch_test

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/launch"
)

func TestPromptIsAbsentFromArgvAndEnvironment(t *testing.T) {
	prompt := "secret-prompt-" + strconv.Itoa(os.Getpid())
	p, err := launch.Start(context.Background(), selfPlan("--print"), launch.Options{Env: testkit.ChildEnv("echo-hold"), Stdin: strings.NewReader(prompt)})
	require.NoError(t, err)
	defer p.Close()
	lines := lineReader(p.Stdout())
	assert.Equal(t, prompt, readLine(t, lines))
	assert.Equal(t, "stdin-closed", readLine(t, lines))

	proc := "/proc/" + strconv.Itoa(p.Pid())
	cmdline, err := os.ReadFile(proc + "/cmdline")
	require.NoError(t, err)
	assert.Contains(t, string(cmdline), "--print", "the scan reads the right process")
	assert.NotContains(t, string(cmdline), prompt)
	environ, err := os.ReadFile(proc + "/environ")
	require.NoError(t, err)
	assert.Contains(t, string(environ), testkit.RoleEnv+"=echo-hold")
	assert.NotContains(t, string(environ), prompt)
	// The launch token is there, exactly once, and nothing else was added.
	var tokens int
	for _, kv := range bytes.Split(environ, []byte{0}) {
		if strings.HasPrefix(string(kv), launch.LaunchIDEnv+"=") {
			tokens++
			assert.Len(t, strings.TrimPrefix(string(kv), launch.LaunchIDEnv+"="), 32)
		}
	}
	assert.Equal(t, 1, tokens)
}

func TestEnvIsExactlyOptionsEnvPlusToken(t *testing.T) {
	env := []string{testkit.RoleEnv + "=echo-hold", "ONLY_THIS=1"}
	p, err := launch.Start(context.Background(), selfPlan(), launch.Options{Env: env, Stdin: strings.NewReader("x")})
	require.NoError(t, err)
	defer p.Close()
	lines := lineReader(p.Stdout())
	readLine(t, lines)
	environ, err := os.ReadFile("/proc/" + strconv.Itoa(p.Pid()) + "/environ")
	require.NoError(t, err)
	got := strings.Split(strings.TrimSuffix(string(environ), "\x00"), "\x00")
	require.Len(t, got, 3)
	assert.Equal(t, env, got[:2])
	assert.True(t, strings.HasPrefix(got[2], launch.LaunchIDEnv+"="))
}

// withSubreaper turns subreaper mode on for one test.
func withSubreaper(t *testing.T) {
	t.Helper()
	require.NoError(t, launch.EnableSubreaper())
	t.Cleanup(func() { require.NoError(t, unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)) })
}

func TestKillTreeFindsOrphansInSubreaperMode(t *testing.T) {
	tests := []struct {
		name  string
		kinds []string
	}{
		// A double-forked, setsid daemon: its parent exited, so no parent
		// chain leads to it.
		{"double-forked daemon", []string{"daemon", "group"}},
		// The child itself exits, orphaning a setsid grandchild.
		{"setsid grandchild of an exited child", []string{"setsid", "exit"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			withSubreaper(t)
			w := testkit.NewWatch(t)
			marker := w.Marker()
			p, err := launch.Start(context.Background(), selfPlan(append([]string{marker}, tc.kinds...)...), launch.Options{Env: testkit.ChildEnv("tree")})
			require.NoError(t, err)
			defer p.Close()
			pids := readReady(t, lineReader(p.Stdout()))
			w.Add(pids...)
			orphan := pids[0]
			stat, err := os.ReadFile("/proc/" + strconv.Itoa(orphan) + "/stat")
			require.NoError(t, err)
			st, err := launch.ParseProcStat(stat)
			require.NoError(t, err)
			if tc.kinds[len(tc.kinds)-1] != "exit" {
				require.Equal(t, os.Getpid(), st.PPid, "the daemon was reparented to this subreaper")
			}

			report, err := p.KillTree()
			require.NoError(t, err)
			waitExited(t, p)
			w.RequireGone(deadline)
			// Reparented orphans were reaped: no zombie of ours is left.
			assert.NoDirExists(t, "/proc/"+strconv.Itoa(orphan)+"/task", "orphan %d left unreaped (%+v)", orphan, report)
			assert.Positive(t, report.Reaped, "%+v", report)
		})
	}
}

func TestKillTreeLeavesOtherTreesAlone(t *testing.T) {
	withSubreaper(t)
	wA, wB := testkit.NewWatch(t), testkit.NewWatch(t)
	markerA, markerB := wA.Marker(), wB.Marker()
	a, err := launch.Start(context.Background(), selfPlan(markerA, "daemon"), launch.Options{Env: testkit.ChildEnv("tree")})
	require.NoError(t, err)
	defer a.Close()
	b, err := launch.Start(context.Background(), selfPlan(markerB, "daemon"), launch.Options{Env: testkit.ChildEnv("tree")})
	require.NoError(t, err)
	defer b.Close()
	pidsA := readReady(t, lineReader(a.Stdout()))
	pidsB := readReady(t, lineReader(b.Stdout()))
	wA.Add(pidsA...)
	wB.Add(pidsB...)

	_, err = a.KillTree()
	require.NoError(t, err)
	wA.RequireGone(deadline)
	assert.ElementsMatch(t, []testkit.Proc{{PID: pidsB[0]}, {PID: b.Pid()}}, wB.Alive(), "the other tree and its orphan must survive")
	select {
	case <-b.Exited():
		t.Fatal("the other tree's root died")
	default:
	}
	require.NoError(t, b.Close())
	assert.Empty(t, wB.Alive())
}
