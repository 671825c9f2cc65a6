package probe

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/discovery/discoverytest"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/shim"
)

func TestExplain(t *testing.T) {
	env, fsys := posixMachine()
	posix := &shim.Options{GOOS: "linux"}
	tests := []struct {
		name     string
		cfg      Config
		target   string
		wantPath string
		wantKind failure.Kind // "" for success
		wantMsg  string
		// wantWhere is where.exe's status for a path, "skipped" on every
		// OS; for a bare name it is the OS's ("unavailable" off Windows).
		wantWhere string
	}{
		{name: "a target", cfg: Config{env: env, fs: fsys, shim: posix}, target: "/opt/custom/cursor-agent", wantPath: "/opt/custom/cursor-agent", wantWhere: "skipped"},
		{name: "the Cursor candidates", cfg: Config{env: env, fs: fsys, shim: posix}, wantPath: "/usr/local/bin/cursor-agent"},
		{name: "the configured binary first", cfg: Config{env: env, fs: fsys, shim: posix, Override: "/opt/custom/cursor-agent"}, wantPath: "/opt/custom/cursor-agent"},
		{name: "no Cursor candidate found", cfg: Config{env: env, fs: discoverytest.NewPOSIX()},
			wantKind: failure.MissingCLI, wantMsg: "Cursor CLI not found"},
		{name: "a target not found", cfg: Config{env: env, fs: fsys, shim: posix}, target: "/opt/none", wantKind: failure.MissingCLI},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, err := Explain(context.Background(), tt.cfg, tt.target, []string{"--print", "model[x=1]"})
			assert.NotNil(t, ex.Warnings, "warnings are a list, never null")
			if tt.wantKind != "" {
				require.Error(t, err)
				assert.Equal(t, tt.wantKind, failure.KindOf(err))
				assert.Contains(t, err.Error(), tt.wantMsg)
				assert.Nil(t, ex.Plan)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantPath, ex.Resolution.Path)
			require.NotNil(t, ex.Plan)
			assert.Equal(t, []string{"--print", "model[x=1]"}, ex.Plan.Args[1:])
			if tt.wantWhere != "" {
				assert.Equal(t, tt.wantWhere, ex.Where.Status)
			} else {
				assert.NotEmpty(t, ex.Where.Status)
			}
		})
	}
}

func TestExplainChecksTheCandidatesFirst(t *testing.T) {
	env, fsys := posixMachine()
	_, err := Explain(context.Background(), Config{env: env, fs: fsys, Override: "agent"}, "", nil)
	require.Error(t, err, "the bare name agent is refused")
	assert.Equal(t, failure.Input, failure.KindOf(err), "%v", err)
}
