package launch_test

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/proctest"
	"github.com/cursorkit/cursorkit/internal/testdir"
	"github.com/cursorkit/cursorkit/launch"
	"github.com/cursorkit/cursorkit/shim"
)

// exeName adds the platform's executable suffix.
func exeName(name string) string {
	if runtime.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

// installAs copies this test binary into dir under name.
func installAs(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(requireExe(t))
	require.NoError(t, err)
	path := filepath.Join(dir, exeName(name))
	require.NoError(t, os.WriteFile(path, data, 0o755))
	return path
}

func agentResolution(path, candidate string, source discovery.Source) discovery.Resolution {
	kind := discovery.POSIX
	if runtime.GOOS == "windows" {
		kind = discovery.Native
	}
	return discovery.Resolution{Path: path, Name: filepath.Base(path), Kind: kind, Source: source, Candidate: candidate}
}

func TestStartWithFallback(t *testing.T) {
	withCursor := testdir.New(t)
	installAs(t, withCursor, discovery.NameCursor)
	installAs(t, withCursor, "present-agent")
	empty := testdir.New(t)
	missingAgent := filepath.Join(empty, exeName(discovery.NameCursorAgent))

	tests := []struct {
		name       string
		res        discovery.Resolution
		configured bool
		pathDir    string
		fellBack   bool
		errKind    failure.Kind
	}{
		{"cursor-agent vanished: cursor starts", agentResolution(missingAgent, discovery.NameCursorAgent, discovery.SourcePath), false, withCursor, true, ""},
		{"cursor-agent present: no fallback", agentResolution(filepath.Join(withCursor, exeName("present-agent")), discovery.NameCursorAgent, discovery.SourcePath), false, withCursor, false, ""},
		{"override configured: no retry", agentResolution(missingAgent, discovery.NameCursorAgent, discovery.SourcePath), true, withCursor, false, failure.MissingCLI},
		{"override candidate: no retry", agentResolution(missingAgent, missingAgent, discovery.SourceOverride), false, withCursor, false, failure.MissingCLI},
		{"cursor vanished: no second retry", agentResolution(missingAgent, discovery.NameCursor, discovery.SourcePath), false, withCursor, false, failure.MissingCLI},
		{"cursor absent too", agentResolution(missingAgent, discovery.NameCursorAgent, discovery.SourcePath), false, empty, false, failure.MissingCLI},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			shimOpts := shim.OptionsFromOS()
			plan, err := shim.Build(tc.res, nil, shimOpts)
			require.NoError(t, err)
			env := discovery.EnvFromOS()
			env.Path = tc.pathDir
			prompt := "same prompt on the retry"
			got, err := launch.StartWithFallback(context.Background(), plan, tc.res,
				launch.Retry{Configured: tc.configured, Env: env, Shim: shimOpts},
				launch.Options{Env: proctest.Env(modeEnv, "echo"), Stdin: strings.NewReader(prompt)})
			if tc.errKind != "" {
				require.Error(t, err)
				assert.Equal(t, tc.errKind, failure.KindOf(err))
				assert.ErrorIs(t, err, fs.ErrNotExist)
				assert.Nil(t, got.Process)
				return
			}
			require.NoError(t, err)
			defer got.Process.Close()
			out, err := io.ReadAll(got.Process.Stdout())
			require.NoError(t, err)
			assert.Equal(t, prompt, string(out))
			status := waitExited(t, got.Process)
			assert.True(t, status.Success(), status.String())
			assert.Equal(t, tc.fellBack, got.FellBack)
			if tc.fellBack {
				assert.Equal(t, discovery.NameCursor, got.Resolution.Candidate)
				assert.Contains(t, got.Plan.Warnings, launch.WarningFellBack)
				assert.Contains(t, got.Resolution.Warnings, launch.WarningFellBack)
			} else {
				assert.Equal(t, plan, got.Plan)
			}
		})
	}
}
