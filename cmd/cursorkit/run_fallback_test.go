package main

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/simtest"
	"github.com/cursorkit/cursorkit/probe"
)

// TestCursorFallback covers SPEC's retry: without an override, a
// cursor-agent from PATH whose file is absent at start is retried once as
// the `cursor` PATH candidate, and in no other case.
func TestCursorFallback(t *testing.T) {
	pathDir := simtest.TempDir(t)
	cursorBin := simtest.Install(t, pathDir, "cursor")
	cursorEnv(t, pathDir, "")
	vanished := failure.Wrap(failure.MissingCLI, fmt.Errorf("start: %w", fs.ErrNotExist), "cannot start")
	fromPath := discovery.Resolution{Path: filepath.Join(pathDir, "cursor-agent"), Source: discovery.SourcePath, Candidate: "cursor-agent"}

	tests := []struct {
		name     string
		override string
		res      discovery.Resolution
		err      error
		want     bool
	}{
		{"cursor-agent from PATH vanished", "", fromPath, vanished, true},
		{"an override is configured", "/opt/cursor-agent", fromPath, vanished, false},
		{"the failure is not a missing file", "", fromPath, failure.New(failure.Setup, "permission denied"), false},
		{"the binary came from CURSOR_AGENT_BIN", "", discovery.Resolution{Source: discovery.SourceEnv, Candidate: "/x/cursor-agent"}, vanished, false},
		{"it was already cursor", "", discovery.Resolution{Source: discovery.SourcePath, Candidate: "cursor"}, vanished, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := turnPlan{cfg: probe.Config{Override: tt.override}, report: probe.Report{Binary: cursor.Binary{Resolution: tt.res}}, args: []string{"--print"}}
			plan := (&app{}).cursorFallback(context.Background(), tp, tt.err)
			if !tt.want {
				assert.Nil(t, plan)
				return
			}
			require.NotNil(t, plan)
			assert.Equal(t, cursorBin, plan.Target)
			assert.Equal(t, "--print", plan.Args[len(plan.Args)-1])
		})
	}
}
