package cursor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/turn"
)

func TestCheckCredentials(t *testing.T) {
	assert.Equal(t, failure.Auth, failure.KindOf(checkCredentials([]string{"PATH=/bin"}, "linux")))
	assert.Equal(t, failure.Auth, failure.KindOf(checkCredentials([]string{EnvAPIKey + "=  "}, "linux")))
	assert.NoError(t, checkCredentials([]string{EnvAPIKey + "=k"}, "linux"))
	assert.NoError(t, checkCredentials(nil, "darwin"))
	assert.NoError(t, checkCredentials(nil, "windows"))
	err := checkCredentials([]string{EnvAPIKey + "="}, "linux")
	assert.Contains(t, err.Error(), EnvAPIKey)
}

func TestPrivateEnv(t *testing.T) {
	env := []string{"HOME=/real", "PATH=/bin", "XDG_CONFIG_HOME=/real/.config", "XDG_DATA_HOME=/d", "XDG_STATE_HOME=/s",
		"XDG_CACHE_HOME=/c", EnvAPIKey + "=k", "HOME=/again", "CURSOR_CONFIG_DIR=/real/cfg", "USERPROFILE=/real"}
	assert.Equal(t, []string{"PATH=/bin", "XDG_CACHE_HOME=/c", EnvAPIKey + "=k", "HOME=/h"}, privateEnv(env, "/h", "linux"))
	win := []string{`Path=C:\bin`, `UserProfile=C:\Users\me`, `home=C:\x`, `Cursor_Config_Dir=C:\c`}
	assert.Equal(t, []string{`Path=C:\bin`, `HOME=C:\h`, `USERPROFILE=C:\h`}, privateEnv(win, `C:\h`, "windows"))
}

func TestBillingPool(t *testing.T) {
	for model, want := range map[string]string{"": "", "composer-2.5": PoolFirstParty, "Composer 2.5 Fast": PoolFirstParty,
		"composer-1": PoolFirstParty, "gpt-5.1-codex-high": PoolAPI, "grok-4.7-high-fast": PoolAPI, "Claude 4.5 Sonnet": PoolAPI} {
		assert.Equal(t, want, BillingPool(model), model)
	}
}

func TestCheckWorkspaceSandbox(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		mode          turn.Mode
		ok            bool
		says          string
	}{
		{name: "readonly for consult", content: `{"type":"workspace_readonly"}`, mode: turn.ModeAsk, ok: true},
		{name: "readonly, no network, no tmp", content: `{"type":"workspace_readonly","networkPolicy":{"default":"deny"},"disableTmpWrite":true}`, mode: turn.ModeAsk, ok: true},
		{name: "readwrite for write", content: `{"type":"workspace_readwrite"}`, mode: turn.ModeWrite, ok: true},
		{name: "readwrite for consult", content: `{"type":"workspace_readwrite"}`, mode: turn.ModeAsk, says: `"type"`},
		{name: "insecure_none", content: `{"type":"insecure_none"}`, mode: turn.ModeWrite, says: `"type"`},
		{name: "extra write paths", content: `{"additionalReadwritePaths":["/"]}`, mode: turn.ModeWrite, says: "additionalReadwritePaths"},
		{name: "extra read paths", content: `{"additionalReadonlyPaths":["/etc"]}`, mode: turn.ModeAsk, says: "additionalReadonlyPaths"},
		{name: "network allowed", content: `{"networkPolicy":{"default":"allow"}}`, mode: turn.ModeAsk, says: "network"},
		{name: "network allow list", content: `{"networkPolicy":{"default":"deny","allow":["example.com"]}}`, mode: turn.ModeAsk, says: "network"},
		{name: "shared build cache", content: `{"enableSharedBuildCache":true}`, mode: turn.ModeWrite, says: "enableSharedBuildCache"},
		{name: "not JSON", content: `{type:`, mode: turn.ModeAsk, says: "not one JSON object"},
		{name: "an array", content: `[]`, mode: turn.ModeAsk, says: "not one JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := testkit.TempDir(t)
			require.NoError(t, os.MkdirAll(filepath.Join(ws, ".cursor"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(ws, ".cursor", "sandbox.json"), []byte(tc.content), 0o644))
			err := CheckWorkspaceSandbox(ws, tc.mode)
			if tc.ok {
				assert.NoError(t, err)
				return
			}
			assert.Equal(t, failure.Sandbox, failure.KindOf(err))
			assert.Contains(t, err.Error(), tc.says)
			assert.NotContains(t, err.Error(), "example.com")
		})
	}
	assert.NoError(t, CheckWorkspaceSandbox(testkit.TempDir(t), turn.ModeAsk), "no file")
}

func FuzzWidens(f *testing.F) {
	for _, s := range []string{`{"type":"workspace_readonly"}`, `{"networkPolicy":{"default":"deny"}}`, `{"type":"insecure_none"}`, `{}`, `[`, `{"a":1}`} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, write bool) {
		mode := turn.ModeAsk
		if write {
			mode = turn.ModeWrite
		}
		reason := widens(data, mode)
		if reason == "" {
			// Accepted: strict by construction.
			s := string(data)
			if strings.Contains(s, "insecure_none") || strings.Contains(s, "additional") {
				t.Fatalf("accepted a widening file: %q", data)
			}
		}
		if len(reason) > 300 {
			t.Fatalf("reason too long: %d", len(reason))
		}
	})
}
