package cursor

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/turn"
)

func TestUserModelChoice(t *testing.T) {
	const chosen = `{"modelId":"gpt-5","displayModelId":"gpt-5","displayName":"GPT-5"}`
	tests := []struct {
		name    string
		goos    string
		dir     string // where the file is, below the root: "home", "xdg" or "config"
		env     []string
		content string
		model   string // "" for none
		changed bool
	}{
		{name: "the home's file", goos: "linux", dir: "home/.cursor", env: []string{"HOME=ROOT/home"},
			content: `{"version":1,"model":` + chosen + `,"hasChangedDefaultModel":true,"permissions":{"allow":["Shell(**)"]}}`,
			model:   chosen, changed: true},
		{name: "CURSOR_CONFIG_DIR first", goos: "linux", dir: "config", env: []string{"HOME=ROOT/home", "CURSOR_CONFIG_DIR=ROOT/config"},
			content: `{"model":` + chosen + `}`, model: chosen},
		{name: "XDG_CONFIG_HOME on Linux", goos: "linux", dir: "xdg/cursor", env: []string{"HOME=ROOT/home", "XDG_CONFIG_HOME=ROOT/xdg"},
			content: `{"model":` + chosen + `}`, model: chosen},
		{name: "XDG_CONFIG_HOME is not macOS's", goos: "darwin", dir: "xdg/cursor", env: []string{"HOME=ROOT/home", "XDG_CONFIG_HOME=ROOT/xdg"},
			content: `{"model":` + chosen + `}`},
		{name: "USERPROFILE on Windows", goos: "windows", dir: "profile/.cursor", env: []string{"HOME=ROOT/home", "USERPROFILE=ROOT/profile"},
			content: `{"model":` + chosen + `}`, model: chosen},
		{name: "compacted", goos: "linux", dir: "home/.cursor", env: []string{"HOME=ROOT/home"},
			content: "{\"model\": {\n  \"modelId\": \"gpt-5\"\n}}", model: `{"modelId":"gpt-5"}`},
		{name: "a model that is no object", goos: "linux", dir: "home/.cursor", env: []string{"HOME=ROOT/home"}, content: `{"model":"gpt-5"}`},
		{name: "not JSON", goos: "linux", dir: "home/.cursor", env: []string{"HOME=ROOT/home"}, content: `{"model":`},
		{name: "no file", goos: "linux", env: []string{"HOME=ROOT/home"}},
		{name: "no home", goos: "linux"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := testkit.TempDir(t)
			if tt.dir != "" {
				dir := filepath.Join(root, filepath.FromSlash(tt.dir))
				require.NoError(t, os.MkdirAll(dir, 0o700))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "cli-config.json"), []byte(tt.content), 0o600))
			}
			var env []string
			for _, kv := range tt.env {
				env = append(env, strings.ReplaceAll(kv, "ROOT", root))
			}
			model, changed := UserModelChoice(env, tt.goos)
			assert.Equal(t, tt.model, string(model))
			assert.Equal(t, tt.changed, changed)
		})
	}
}

// TestPrivateConfigCarriesTheModelChoice: the private cli-config.json
// holds the user's model choice, and nothing of it without one.
func TestPrivateConfigCarriesTheModelChoice(t *testing.T) {
	for _, model := range []jsontext.Value{nil, jsontext.Value(`{"modelId":"gpt-5"}`)} {
		home := filepath.Join(testkit.TempDir(t), "home")
		require.NoError(t, WritePrivateHome(home, HomeSpec{Mode: turn.ModeAsk, Workspace: testkit.TempDir(t), Model: model, ModelChanged: model != nil}))
		data, err := os.ReadFile(filepath.Join(home, ".cursor", "cli-config.json"))
		require.NoError(t, err)
		var doc map[string]jsontext.Value
		require.NoError(t, json.Unmarshal(data, &doc))
		if model == nil {
			assert.NotContains(t, doc, "model")
			assert.NotContains(t, doc, "hasChangedDefaultModel")
			continue
		}
		assert.JSONEq(t, string(model), string(doc["model"]))
		assert.Equal(t, "true", string(doc["hasChangedDefaultModel"]))
	}
}

// FuzzUserModelChoice: whatever the user's config file holds, the choice
// read is nothing or one compact JSON object.
func FuzzUserModelChoice(f *testing.F) {
	f.Add(`{"model":{"modelId":"gpt-5"},"hasChangedDefaultModel":true}`)
	f.Add(`{"model":"x"}`)
	f.Add(`{"model":{"a":1},"model":{"b":2}}`)
	f.Add("\ufeff{\"model\":{}}")
	f.Fuzz(func(t *testing.T, content string) {
		dir := testkit.TempDir(t)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "cli-config.json"), []byte(content), 0o600))
		model, changed := UserModelChoice([]string{"CURSOR_CONFIG_DIR=" + dir}, "linux")
		if model == nil {
			assert.False(t, changed)
			return
		}
		assert.Equal(t, jsontext.Kind('{'), model.Kind())
		compact := model.Clone()
		require.NoError(t, compact.Compact())
		assert.Equal(t, string(compact), string(model), "compact")
	})
}
