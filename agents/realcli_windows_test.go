package agents_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/realcli"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// realWin32 is where scripts/real-clis installs the Windows x64 builds of
// Claude Code and Codex; CURSORKIT_REAL_CLIS_WIN32 overrides it. Without
// them the test skips, unless CI is set (CI installs them).
func realWin32(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CURSORKIT_REAL_CLIS_WIN32")
	if dir == "" {
		dir = filepath.Join("..", ".cache", "realclis", "win32")
	}
	dir, err := filepath.Abs(dir)
	require.NoError(t, err)
	if _, err = os.Stat(filepath.Join(dir, "node_modules", ".bin", "claude.cmd")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the real Windows CLIs are not installed in %s (scripts/real-clis): %v", dir, err)
		}
		t.Skipf("the real Windows CLIs are not installed in %s: run scripts/real-clis", dir)
	}
	return dir
}

// TestRealWindowsCLIs runs the real Windows builds: Claude Code's native
// claude.exe through npm's own .cmd shim, found on PATH by PATHEXT as a
// turn would find it, and Codex's native codex.exe (its npm shim runs
// codex.js with node.exe, which the lane does not have). Each answers
// --version through the whole launch path: plan, cmd.exe, Job Object,
// supervision, parsing.
func TestRealWindowsCLIs(t *testing.T) {
	dir := realWin32(t)
	home := testkit.TempDir(t)
	environ := []string{"USERPROFILE=" + home, "HOME=" + home, "SystemRoot=" + os.Getenv("SystemRoot"),
		"PATH=" + os.Getenv("PATH"), "TEMP=" + home, "TMP=" + home}
	tests := []struct {
		agent   string
		find    func(a agents.Agent) (discovery.Resolution, error)
		kind    discovery.Kind
		version string
	}{
		{agent: "claude", kind: discovery.CmdShim, version: "2.1.197", find: func(a agents.Agent) (discovery.Resolution, error) {
			env := discovery.EnvFromOS()
			env.Path = filepath.Join(dir, "node_modules", ".bin")
			return a.Find(context.Background(), "", func(string) string { return "" }, env, discovery.OSFS())
		}},
		{agent: "codex", kind: discovery.Native, version: "0.171.0", find: func(a agents.Agent) (discovery.Resolution, error) {
			exe, err := filepath.Abs(filepath.Join(dir, "node_modules", "@openai", "codex-win32-x64", "vendor", "x86_64-pc-windows-msvc", "bin", "codex.exe"))
			require.NoError(t, err)
			return a.Find(context.Background(), exe, nil, discovery.EnvFromOS(), discovery.OSFS())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.agent, func(t *testing.T) {
			a, err := agents.Lookup(tt.agent)
			if err != nil {
				t.Skipf("%s is not in the list yet", tt.agent)
			}
			res, err := tt.find(a)
			require.NoError(t, err)
			assert.Equal(t, tt.kind, res.Kind)
			// A cold Wine start of a 230 MB program is slow.
			v, err := a.Version(context.Background(), res, environ, 3*time.Minute)
			require.NoError(t, err)
			assert.Equal(t, tt.version, v)
		})
	}
}

// TestRealCLIsUnderWine runs one real turn of each Windows build against
// the model-API stand-in, as far as Wine 8 runs them. A turn that Wine
// runs through is checked as the text scenario's real turn; one that
// Wine stops must stop where Wine stops it:
//
//   - claude.exe, started through npm's claude.cmd (PATHEXT, cmd.exe, the
//     Job Object), may die calling DiscardVirtualMemory, which Wine's
//     kernel32 lacks (sometimes before its first request, sometimes after,
//     sometimes not at all on a quiet machine): Wine ends it with its
//     stub's exception code, 0x80000100;
//   - codex.exe fails opening its SQLite state in CODEX_HOME, "Lock
//     violation" (os error 33), before any request; a codex.exe that gets
//     further fails this test, and TestRealTurns can then run it.
func TestRealCLIsUnderWine(t *testing.T) {
	if !testkit.UnderWine() {
		t.Skip("on Windows itself, TestRealTurns plays every scenario")
	}
	realWin32(t)
	tests := []struct {
		cli       string
		mayFinish bool // Wine may run the turn through
		kind      failure.Kind
		says      string // the turn's failure message holds it
	}{
		{cli: realcli.Claude, mayFinish: true, kind: failure.Process, says: "exited with code 2147483904 before its first event"},
		{cli: realcli.Codex, kind: failure.Setup, says: "Lock violation"},
	}
	for _, tt := range tests {
		t.Run(tt.cli, func(t *testing.T) {
			s := newRealSetup(t, tt.cli, realcli.ScenarioNamed(t, "text"))
			s.opts.FirstLineTimeout = 3 * time.Minute // a cold Wine start of a 230 MB program
			stream, o, err := runAndWrite(t, s.agent, s.res, s.req, s.opts)
			t.Logf("%s under Wine: %s: %s", tt.cli, o.Status, o.Message)
			if err == nil && tt.mayFinish {
				realcli.Check(t, s.sc.WantFor(tt.cli), realcli.Run{Observed: realcli.Observe(t, []byte(stream)), Requests: s.api.Requests(), Workspace: s.ws})
				return
			}
			require.Error(t, err, "%s ran a whole turn under Wine: TestRealTurns can run it now", tt.cli)
			assert.Equal(t, tt.kind, failure.KindOf(err))
			for _, r := range s.api.Requests() {
				assert.Equal(t, -1, r.Reply, "no model request got through: %s %s", r.Method, r.Path)
			}
			assert.Contains(t, o.Message, tt.says)
			assert.NotContains(t, o.Message, realcli.PromptMark)
		})
	}
}
