package discovery_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/discovery/discoverytest"
	"github.com/cursorkit/cursorkit/failure"
)

// cands builds candidates the way a caller's policy does (package cursor's,
// for one): a configured value, one from an environment variable, then two
// bare names, without duplicates.
func cands(override, envBin string) []discovery.Candidate {
	var out []discovery.Candidate
	add := func(c discovery.Candidate) {
		c.Value = strings.TrimSpace(c.Value)
		for _, o := range out {
			if o.Value == c.Value {
				return
			}
		}
		if c.Value != "" {
			out = append(out, c)
		}
	}
	add(discovery.Candidate{Value: override, Source: discovery.SourceOverride, Origin: "configured binary"})
	add(discovery.Candidate{Value: envBin, Source: discovery.SourceEnv, Origin: "CURSOR_AGENT_BIN"})
	add(discovery.Candidate{Value: "cursor-agent", Source: discovery.SourcePath})
	add(discovery.Candidate{Value: "cursor", Source: discovery.SourcePath})
	return out
}

func TestResolveFirst(t *testing.T) {
	secretPath := `C:\secret-dir-one;C:\secret-dir-two;relative-secret;C:\Users\A User\AppData\Roaming\npm`
	tests := []struct {
		name         string
		override     string
		envBin       string
		fs           func(*discoverytest.FS)
		wantPath     string
		wantSource   discovery.Source
		wantErr      failure.Kind
		errHas       []string
		outcomes     []string
		warnHas      string
		overrideUsed bool
	}{
		{
			name:       "override wins",
			override:   `C:\Program Files\Cursor Agent\cursor-agent.exe`,
			fs:         func(f *discoverytest.FS) { f.File(`C:\Program Files\Cursor Agent\cursor-agent.exe`, 0o644) },
			wantPath:   `C:\Program Files\Cursor Agent\cursor-agent.exe`,
			wantSource: discovery.SourceOverride,
			outcomes:   []string{discovery.OutcomeChosen},
		},
		{
			name:       "missing override falls through to PATH, with a warning",
			override:   `C:\gone\cursor-agent.exe`,
			fs:         func(f *discoverytest.FS) { f.File(`C:\Users\A User\AppData\Roaming\npm\cursor-agent.cmd`, 0o644) },
			wantPath:   `C:\Users\A User\AppData\Roaming\npm\cursor-agent.cmd`,
			wantSource: discovery.SourcePath,
			outcomes:   []string{discovery.OutcomeNotFound, discovery.OutcomeChosen},
			warnHas:    `configured binary "C:\gone\cursor-agent.exe": no such file`,
		},
		{
			name:       "env candidate before PATH names; cursor after cursor-agent",
			envBin:     `C:\gone\x.exe`,
			fs:         func(f *discoverytest.FS) { f.File(`C:\secret-dir-two\cursor.exe`, 0o644) },
			wantPath:   `C:\secret-dir-two\cursor.exe`,
			wantSource: discovery.SourcePath,
			outcomes:   []string{discovery.OutcomeNotFound, discovery.OutcomeNotFound, discovery.OutcomeChosen},
			warnHas:    `CURSOR_AGENT_BIN="C:\gone\x.exe": no such file`,
		},
		{
			name:     "nothing anywhere: MissingCLI naming every candidate, never PATH",
			override: `C:\gone\cursor-agent.exe`,
			envBin:   "cursor-agent-nightly",
			fs:       func(f *discoverytest.FS) { f.File(`C:\secret-dir-one\cursor-agent`, 0o755) },
			wantErr:  failure.MissingCLI,
			errHas: []string{
				`configured binary "C:\gone\cursor-agent.exe": no such file`,
				`CURSOR_AGENT_BIN="cursor-agent-nightly": not found in 3 PATH directories (1 relative entries refused)`,
				`"cursor-agent" on PATH: not found in 3 PATH directories (1 relative entries refused); skipped cursor-agent (no extension`,
				`"cursor" on PATH: not found`,
			},
			outcomes: []string{discovery.OutcomeNotFound, discovery.OutcomeNotFound, discovery.OutcomeNotFound, discovery.OutcomeNotFound},
		},
		{
			name:     "refused override and nothing else: Input",
			override: `C:\x\cursor-agent.js`,
			fs:       func(f *discoverytest.FS) { f.File(`C:\x\cursor-agent.js`, 0o644) },
			wantErr:  failure.Input,
			errHas:   []string{`configured binary "C:\x\cursor-agent.js": cursor-agent.js: extension ".js" is not launchable`},
			outcomes: []string{discovery.OutcomeRefused, discovery.OutcomeNotFound, discovery.OutcomeNotFound},
		},
		{
			name:     "refused override but cursor-agent on PATH: success with a warning",
			override: `C:\x\cursor-agent.js`,
			fs: func(f *discoverytest.FS) {
				f.File(`C:\x\cursor-agent.js`, 0o644).File(`C:\secret-dir-one\cursor-agent.exe`, 0o644)
			},
			wantPath:   `C:\secret-dir-one\cursor-agent.exe`,
			wantSource: discovery.SourcePath,
			outcomes:   []string{discovery.OutcomeRefused, discovery.OutcomeChosen},
			warnHas:    `extension ".js" is not launchable`,
		},
		{
			name:       "override cursor-agent is the PATH search, tried once",
			override:   "cursor-agent",
			fs:         func(f *discoverytest.FS) { f.File(`C:\secret-dir-two\cursor.exe`, 0o644) },
			wantPath:   `C:\secret-dir-two\cursor.exe`,
			wantSource: discovery.SourcePath,
			outcomes:   []string{discovery.OutcomeNotFound, discovery.OutcomeChosen},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := discoverytest.NewWindows()
			tt.fs(fsys)
			env := winEnv(secretPath)
			res, err := discovery.ResolveFirst(context.Background(), cands(tt.override, tt.envBin), env, fsys)
			var outcomes []string
			for _, a := range res.Attempts {
				outcomes = append(outcomes, a.Outcome)
				assert.LessOrEqual(t, len(a.Detail), 180)
				if a.Outcome != discovery.OutcomeChosen {
					assert.NotContains(t, a.Detail, "secret", "a failure reason leaks PATH")
				}
			}
			assert.Equal(t, tt.outcomes, outcomes)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, tt.wantErr, failure.KindOf(err))
				msg := err.Error()
				for _, want := range tt.errHas {
					assert.Contains(t, msg, want)
				}
				assert.NotContains(t, msg, "secret", "failure leaks PATH")
				assert.NotContains(t, msg, "A User", "failure leaks PATH")
				assert.NotEmpty(t, res.Trail, "the trail is kept for diagnostics")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantPath, res.Path)
			assert.Equal(t, tt.wantSource, res.Source)
			if tt.warnHas != "" {
				assert.Contains(t, strings.Join(res.Warnings, "\n"), tt.warnHas)
			}
			// The trail covers every candidate tried, in order.
			var seen []string
			for _, s := range res.Trail {
				if len(seen) == 0 || seen[len(seen)-1] != s.Candidate {
					seen = append(seen, s.Candidate)
				}
			}
			assert.Len(t, seen, len(tt.outcomes))
		})
	}
}

func TestResolveFirstBoundsEachReason(t *testing.T) {
	long := `C:\` + strings.Repeat("very long folder name ", 40) + `\cursor-agent.exe`
	res, err := discovery.ResolveFirst(context.Background(),
		cands(long, strings.Repeat("x", 500)),
		winEnv(`C:\a`), discoverytest.NewWindows())
	require.Error(t, err)
	assert.Len(t, res.Attempts, 4)
	reasons := strings.Split(err.Error(), "; ")
	for _, r := range reasons {
		assert.LessOrEqual(t, len(r), 240, r) // each about 180, plus the message prefix on the first
	}
	assert.Contains(t, err.Error(), "…")
}

func TestResolveFirstNoCandidates(t *testing.T) {
	_, err := discovery.ResolveFirst(context.Background(), nil, winEnv(`C:\a`), discoverytest.NewWindows())
	require.Error(t, err)
	assert.Equal(t, failure.MissingCLI, failure.KindOf(err))
	assert.Contains(t, err.Error(), "no candidates")
}

func TestResolveHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fsys := discoverytest.NewPOSIX().File("/a/cursor-agent", 0o755)
	_, err := discovery.ResolveFirst(ctx, cands("", ""), posixEnv("/a"), fsys)
	require.Error(t, err)
	assert.Equal(t, failure.Cancelled, failure.KindOf(err))
	assert.Empty(t, fsys.Lookups())

	ctx, cancel = context.WithTimeout(context.Background(), 0)
	defer cancel()
	<-ctx.Done()
	_, err = discovery.Resolve(ctx, discovery.Candidate{Value: "cursor-agent", Source: discovery.SourcePath}, posixEnv("/a"), fsys)
	assert.Equal(t, failure.Timeout, failure.KindOf(err))
}

// TestTrailIsBounded: a long PATH yields at most the per-candidate bound,
// a count of what was left out, and the verdict last.
func TestTrailIsBounded(t *testing.T) {
	var dirs []string
	for i := range 200 {
		dirs = append(dirs, fmt.Sprintf("/d%03d", i))
	}
	fsys := discoverytest.NewPOSIX().File("/d199/cursor-agent", 0o755)
	res, err := discovery.Resolve(context.Background(), discovery.Candidate{Value: "cursor-agent", Source: discovery.SourcePath},
		posixEnv(strings.Join(dirs, ":")), fsys)
	require.NoError(t, err)
	assert.Equal(t, "/d199/cursor-agent", res.Path)
	assert.LessOrEqual(t, len(res.Trail), 50)
	omitted := stepsWith(res.Trail, discovery.OutcomeOmitted)
	require.Len(t, omitted, 1)
	assert.Equal(t, "151 more steps left out", omitted[0].Detail)
	last := res.Trail[len(res.Trail)-1]
	assert.Equal(t, discovery.OutcomeChosen, last.Outcome)
	assert.Equal(t, "/d199/cursor-agent", last.Path)
}

// TestHugePathStaysLinear: thousands of entries, many repeated, are
// searched once each and counted.
func TestHugePathStaysLinear(t *testing.T) {
	var dirs []string
	for i := range 3000 {
		dirs = append(dirs, fmt.Sprintf("/d%d", i%1000))
	}
	fsys := discoverytest.NewPOSIX()
	res, err := discovery.Resolve(context.Background(), discovery.Candidate{Value: "cursor-agent", Source: discovery.SourcePath},
		posixEnv(strings.Join(dirs, ":")), fsys)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not found in 1000 PATH directories")
	assert.Contains(t, fmt.Sprint(res.Trail), "2000 repeated PATH entries searched once")
	assert.Len(t, fsys.Lookups(), 1000)
}
