package launch_test

import (
	"context"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/launch"
)

// TestChildrenNeverInheritCursorkitSecrets: CURSORKIT_TOKEN reaches no
// child, whether the environment is inherited (Env nil) or given.
func TestChildrenNeverInheritCursorkitSecrets(t *testing.T) {
	const secret = "s3cr3t-token-0123456789"
	t.Setenv("CURSORKIT_TOKEN", secret)
	t.Setenv(testkit.RoleEnv, "env")
	given := append(testkit.ChildEnv("env"), "CURSORKIT_TOKEN="+secret, "KEPT_VARIABLE=kept")
	if runtime.GOOS == "windows" {
		given = append(given, "cursorkit_token="+secret) // one variable to Windows
	}
	tests := []struct {
		name string
		env  []string
	}{
		{"inherited", nil},
		{"given", given},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := launch.Start(context.Background(), selfPlan(), launch.Options{Env: tt.env})
			require.NoError(t, err)
			defer p.Close()
			out, err := io.ReadAll(p.Stdout())
			require.NoError(t, err)
			status, err := p.Wait()
			require.NoError(t, err)
			require.True(t, status.Success(), status.String())
			env := string(out)
			require.Contains(t, env, testkit.RoleEnv+"=env", "the child printed its environment")
			assert.NotContains(t, env, secret)
			assert.NotContains(t, strings.ToUpper(env), "CURSORKIT_TOKEN=")
			if tt.env != nil {
				assert.Contains(t, env, "KEPT_VARIABLE=kept", "other variables are passed on")
			}
		})
	}
}
