package launch_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

	for _, pid := range []int{p.Pid(), p.Root().PPid} { // the child and its guard
		proc := "/proc/" + strconv.Itoa(pid)
		cmdline, err := os.ReadFile(proc + "/cmdline")
		require.NoError(t, err)
		assert.NotContains(t, string(cmdline), prompt)
		environ, err := os.ReadFile(proc + "/environ")
		require.NoError(t, err)
		assert.NotContains(t, string(environ), prompt)
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(p.Pid()) + "/cmdline")
	require.NoError(t, err)
	assert.Contains(t, string(cmdline), "--print", "the scan reads the right process")
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
	token, ok := strings.CutPrefix(got[2], launch.LaunchIDEnv+"=")
	assert.True(t, ok, "the launch token comes last: %q", got[2])
	assert.Len(t, token, 32)
}

// TestTheGuardIsTheChildsParent: on Linux a launch guard, this binary run
// again, owns the tree (docs/architecture.md "The launch guard").
func TestTheGuardIsTheChildsParent(t *testing.T) {
	p, err := launch.Start(context.Background(), selfPlan(), launch.Options{Env: testkit.ChildEnv("echo-hold"), Stdin: strings.NewReader("x")})
	require.NoError(t, err)
	defer p.Close()
	readLine(t, lineReader(p.Stdout()))
	assert.Empty(t, p.Warnings())
	guard := p.Root().PPid
	require.NotEqual(t, os.Getpid(), guard)
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(p.Pid()) + "/stat")
	require.NoError(t, err)
	child, err := launch.ParseProcStat(stat)
	require.NoError(t, err)
	assert.Equal(t, guard, child.PPid)
	stat, err = os.ReadFile("/proc/" + strconv.Itoa(guard) + "/stat")
	require.NoError(t, err)
	g, err := launch.ParseProcStat(stat)
	require.NoError(t, err)
	assert.Equal(t, os.Getpid(), g.PPid)
	assert.Equal(t, guard, g.Group, "the guard leads a group of its own")
	exe, err := os.Readlink("/proc/" + strconv.Itoa(guard) + "/exe")
	require.NoError(t, err)
	self, err := os.Executable()
	require.NoError(t, err)
	assert.Equal(t, self, exe, "the guard is this binary")
}

// escapeKinds are grandchildren that leave the process group and lose
// their parent: a double-forked setsid daemon, the same with an empty
// environment (as sudo, env -i and many daemons start theirs), and a
// setsid grandchild of a child that exits.
var escapeKinds = []struct {
	name  string
	kinds []string
}{
	{"double-forked daemon", []string{"daemon", "group"}},
	{"double-forked daemon with an empty environment", []string{"envless-daemon", "group"}},
	{"setsid grandchild of an exited child", []string{"setsid", "exit"}},
	{"empty-environment setsid grandchild of an exited child", []string{"envless", "exit"}},
}

func TestKillTreeKillsOrphansWhateverTheyDid(t *testing.T) {
	for _, tc := range escapeKinds {
		t.Run(tc.name, func(t *testing.T) {
			w := testkit.NewWatch(t)
			marker := w.Marker()
			p, err := launch.Start(context.Background(), selfPlan(append([]string{marker}, tc.kinds...)...), launch.Options{Env: testkit.ChildEnv("tree")})
			require.NoError(t, err)
			defer p.Close()
			pids := readReady(t, lineReader(p.Stdout()))
			w.Add(pids...)
			orphan := pids[0]
			testkit.Eventually(t, "the orphan to be reparented to the guard", deadline, func() bool {
				stat, err := os.ReadFile("/proc/" + strconv.Itoa(orphan) + "/stat")
				require.NoError(t, err)
				st, err := launch.ParseProcStat(stat)
				require.NoError(t, err)
				return st.PPid == p.Root().PPid
			})

			report, err := p.KillTree()
			require.NoError(t, err)
			waitExited(t, p)
			w.RequireGone(deadline)
			assert.Positive(t, report.Reaped, "the guard reaped the orphan: %+v", report)
			require.NoError(t, p.Close())
		})
	}
}

// TestCloseKillsWhatACleanExitLeft: a child that exits 0 after starting a
// daemon (a --version that forks one, say) leaves nothing once Close
// returned.
func TestCloseKillsWhatACleanExitLeft(t *testing.T) {
	for _, tc := range escapeKinds {
		if tc.kinds[len(tc.kinds)-1] != "exit" {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			w := testkit.NewWatch(t)
			marker := w.Marker()
			p, err := launch.Start(context.Background(), selfPlan(append([]string{marker}, tc.kinds...)...), launch.Options{Env: testkit.ChildEnv("tree")})
			require.NoError(t, err)
			w.Add(readReady(t, lineReader(p.Stdout()))...)
			assert.Equal(t, launch.ExitStatus{}, waitExited(t, p))
			require.NoError(t, p.Close())
			w.RequireGone(deadline)
		})
	}
}

func TestKillTreeLeavesOtherTreesAlone(t *testing.T) {
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

// TestTokenlessOrphansWaitForTheTreesThatMayOwnThem: an orphan without a
// launch token (it cleared its environment) that started while two trees
// were open may be either's: it is killed once neither is open, never
// while the other one might still need it (docs/architecture.md "The
// launch guard").
func TestTokenlessOrphansWaitForTheTreesThatMayOwnThem(t *testing.T) {
	wA, wB := testkit.NewWatch(t), testkit.NewWatch(t)
	a, err := launch.Start(context.Background(), selfPlan(wA.Marker(), "group"), launch.Options{Env: testkit.ChildEnv("tree")})
	require.NoError(t, err)
	defer a.Close()
	wA.Add(readReady(t, lineReader(a.Stdout()))...)
	b, err := launch.Start(context.Background(), selfPlan(wB.Marker(), "envless-daemon", "exit"), launch.Options{Env: testkit.ChildEnv("tree")})
	require.NoError(t, err)
	orphan := readReady(t, lineReader(b.Stdout()))
	wB.Add(orphan...)
	waitExited(t, b)

	require.NoError(t, b.Close())
	assert.Equal(t, []testkit.Proc{{PID: orphan[0]}}, wB.Alive(), "while tree A is open the orphan may be A's")
	require.NoError(t, a.Close())
	wA.RequireGone(deadline)
	wB.RequireGone(deadline)
}

// TestKillTreeWithoutTheGuardKillsTheGroup: with the launch guard killed
// on its own, a double-forked process left in the child's group (no
// longer its descendant) still goes with the tree: the child, found in
// the process table under its own identity, holds the group ID, so the
// group is signalled.
func TestKillTreeWithoutTheGuardKillsTheGroup(t *testing.T) {
	w := testkit.NewWatch(t)
	p, err := launch.Start(context.Background(), selfPlan(w.Marker(), "group-daemon"), launch.Options{Env: testkit.ChildEnv("tree")})
	require.NoError(t, err)
	defer p.Close()
	pids := readReady(t, lineReader(p.Stdout()))
	w.Add(pids...)
	guard := p.Root().PPid
	require.NotEqual(t, os.Getpid(), guard)
	require.NoError(t, syscall.Kill(guard, syscall.SIGKILL))
	testkit.Eventually(t, "the guard to be gone", deadline, func() bool {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(p.Pid()) + "/stat")
		if err != nil {
			return false
		}
		st, err := launch.ParseProcStat(stat)
		return err == nil && st.PPid != guard
	})

	report, err := p.KillTree()
	require.Error(t, err, "the lost guard is reported")
	assert.True(t, report.Group, "the group was signalled: %+v", report)
	w.RequireGone(deadline)
}
