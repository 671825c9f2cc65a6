package probe

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

func TestStatusAndModelsOfWithoutBinary(t *testing.T) {
	env, fsys := posixMachine()
	cfg := Config{env: env, fs: fsys, runner: newFakeRunner()}
	report, auth, err := StatusOf(context.Background(), cfg)
	assert.False(t, report.Available)
	assert.Equal(t, failure.MissingCLI, failure.KindOf(err))
	assert.Equal(t, Auth{State: AuthUnknown, Reason: "start_failed", Detail: "no Cursor CLI binary is available"}, auth)

	models, err := ModelsOf(context.Background(), cfg, false)
	assert.Equal(t, failure.MissingCLI, failure.KindOf(err))
	assert.Equal(t, []Model{}, models.Models, "no binary lists no models, never null")
	assert.Equal(t, report.Diagnostics, models.Diagnostics)
}

func TestStatusAndModelsOfAnOldBuild(t *testing.T) {
	env, fsys := posixMachine()
	run := newFakeRunner().
		on("/usr/local/bin/cursor-agent", "--version", printed("2020.01.01-aaaaaaa\n")).
		on("/usr/local/bin/cursor-agent", "status --format json", printed(`{"isAuthenticated":true}`)).
		on("/usr/local/bin/cursor-agent", "models", printed("a - A\n"))
	cfg := Config{env: env, fs: fsys, runner: run, CacheDir: testkit.TempDir(t)}
	_, auth, err := StatusOf(context.Background(), cfg)
	assert.Equal(t, failure.Setup, failure.KindOf(err), "the probe's error")
	assert.True(t, auth.Authenticated, "the status still ran")

	models, err := ModelsOf(context.Background(), cfg, false)
	assert.Equal(t, failure.Setup, failure.KindOf(err), "the probe's error")
	assert.Equal(t, []Model{{ID: "a", Label: "A"}}, models.Models, "the old build still lists its models")
}

func TestResolveTurnModel(t *testing.T) {
	env, fsys := posixMachine()
	tests := []struct {
		name, model, effort string
		want                string
		wantApplied         bool
		wantCatalog         bool // the catalog was asked for
	}{
		{name: "a bracketed id needs no catalog", model: "gpt-5[reasoning=high]", want: "gpt-5[reasoning=high]"},
		{name: "a bracketed id with an effort asks the catalog", model: "gpt-5[x]", effort: "high", want: "gpt-5[x]", wantCatalog: true},
		{name: "a catalog id", model: "A", want: "a", wantCatalog: true},
		{name: "an effort variant", model: "a", effort: "high", want: "a-high", wantApplied: true, wantCatalog: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := newFakeRunner().
				on("/usr/local/bin/cursor-agent", "--version", printed("2026.10.15-a1b2c3d\n")).
				on("/usr/local/bin/cursor-agent", "models", printed("a - A\na-high - A High\n"))
			cfg := Config{env: env, fs: fsys, runner: run, CacheDir: testkit.TempDir(t)}
			report, err := Probe(context.Background(), cfg)
			require.NoError(t, err)
			id, applied, err := ResolveTurnModel(context.Background(), cfg, report, tt.model, tt.effort)
			require.NoError(t, err)
			assert.Equal(t, tt.want, id)
			assert.Equal(t, tt.wantApplied, applied)
			assert.Equal(t, tt.wantCatalog, len(run.Calls()) == 2, "calls: %v", run.Calls())
		})
	}
}

func TestDiagnose(t *testing.T) {
	found := Report{Available: true, Binary: cursor.Binary{Resolution: discovery.Resolution{Path: "/usr/local/bin/cursor-agent", Source: discovery.SourcePath}}}
	authed := Auth{State: AuthAuthenticated}
	oneModel := ModelsReport{Models: []Model{{ID: "a"}}}
	missing := failure.New(failure.MissingCLI, "Cursor CLI not found")
	tests := []struct {
		name       string
		cfg        Config
		in         Inspection
		explainErr error
		want       []Problem
	}{
		{name: "all good", in: Inspection{Probe: found, Auth: authed, Models: oneModel}, want: []Problem{}},
		{name: "no binary: the install hint, and no explain problem beside it",
			in: Inspection{ProbeErr: missing}, explainErr: missing,
			want: []Problem{{Kind: failure.MissingCLI, Message: missing.Error(), Fix: cursor.InstallHint}}},
		{name: "an old build", in: Inspection{Probe: found, ProbeErr: failure.New(failure.Setup, "old"), Auth: authed, Models: oneModel},
			want: []Problem{{Kind: failure.Setup, Message: "old", Fix: "update the Cursor CLI (cursor-agent update), or point cursorCliBinaryPath at a newer build"}}},
		{name: "another probe failure", in: Inspection{ProbeErr: failure.New(failure.Process, "crashed")},
			want: []Problem{{Kind: failure.Process, Message: "crashed", Fix: "run `cursorkit shim explain` to see how the binary is found and launched"}}},
		{name: "the configured binary was passed over", cfg: Config{Override: "/opt/custom/noexec"},
			in: Inspection{Probe: found, Auth: authed, Models: oneModel},
			want: []Problem{{Kind: failure.Setup, Message: "the configured binary did not work; a PATH candidate is used instead",
				Fix: "fix or clear cursorCliBinaryPath (an empty value clears it); the probe's diagnostics say why it failed"}}},
		{name: "a turn that cannot be planned", in: Inspection{Probe: found, Auth: authed, Models: oneModel},
			explainErr: failure.New(failure.Input, "bad char"),
			want:       []Problem{{Kind: failure.Input, Message: "bad char", Fix: "the binary answers --version but a prompt turn could not be planned; see the explain section"}}},
		{name: "logged out, and a network failure listing models",
			in: Inspection{Probe: found, Auth: Auth{State: AuthUnauthenticated, Reason: reasonNotLoggedIn},
				Models: ModelsReport{Cause: cursor.CauseNetwork}, ModelsErr: failure.New(failure.Network, "offline")},
			want: []Problem{
				{Kind: failure.Auth, Message: Auth{State: AuthUnauthenticated, Reason: reasonNotLoggedIn}.Err().Error(), Fix: fixOr(cursor.CauseNotLoggedIn, "")},
				{Kind: failure.Network, Message: "offline", Fix: cursor.CauseNetwork.Fix()},
			}},
		{name: "a models failure with no known cause", in: Inspection{Probe: found, Auth: authed, ModelsErr: failure.New(failure.Process, "exit 1")},
			want: []Problem{{Kind: failure.Process, Message: "exit 1", Fix: "run `cursor-agent models` by hand; `cursorkit models --refresh` asks again"}}},
		{name: "no models", in: Inspection{Probe: found, Auth: authed},
			want: []Problem{{Kind: failure.Setup, Message: "no models are available for this account", Fix: "check the account's plan in the Cursor dashboard"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Diagnose(tt.cfg, tt.in, tt.explainErr))
		})
	}
}

func TestDiagnoseListsAProblemOnce(t *testing.T) {
	blocked := failure.New(failure.Network, "getaddrinfo ENOTFOUND")
	in := Inspection{Probe: Report{Blocked: cursor.CauseNetwork}, ProbeErr: blocked}
	in.Probe.Available = true
	in.Models, in.ModelsErr = ModelsReport{Cause: cursor.CauseNetwork}, blocked
	in.Auth = Auth{State: AuthAuthenticated}
	assert.Equal(t, []Problem{{Kind: failure.Network, Message: blocked.Error(), Fix: cursor.CauseNetwork.Fix()}}, Diagnose(Config{}, in, nil))
}

func TestDiagnoseFixesAModelsFailureByItsCause(t *testing.T) {
	tests := []struct {
		name  string
		cause cursor.Cause
		fix   string
	}{
		{name: "a cause printed instead of the catalog", cause: cursor.CauseKeychainLocked, fix: cursor.CauseKeychainLocked.Fix()},
		{name: "the quota", cause: cursor.CauseQuota, fix: cursor.CauseQuota.Fix()},
		{name: "no cause", cause: cursor.CauseNone, fix: "run `cursor-agent models` by hand; `cursorkit models --refresh` asks again"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			listing := failure.New(failure.Auth, "listing Cursor models failed")
			in := Inspection{Probe: Report{Available: true}, Auth: Auth{State: AuthAuthenticated},
				Models: ModelsReport{Cause: tt.cause}, ModelsErr: listing}
			assert.Equal(t, []Problem{{Kind: failure.Auth, Message: listing.Error(), Fix: tt.fix}}, Diagnose(Config{}, in, nil))
		})
	}
}
