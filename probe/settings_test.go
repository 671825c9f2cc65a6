package probe

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testdir"
)

func TestLoadSettings(t *testing.T) {
	dir := testdir.New(t)
	write := func(content string) string {
		p := filepath.Join(dir, fmt.Sprintf("s%d.json", len(content)))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	tests := []struct {
		name    string
		path    string
		want    string
		wantErr bool
	}{
		{"missing file", filepath.Join(dir, "absent", "settings.json"), "", false},
		{"empty file", write(""), "", false},
		{"path with spaces", write(`{"cursorCliBinaryPath":"  C:\\Users\\A User\\AppData\\Roaming\\npm\\cursor-agent.cmd "}`),
			`C:\Users\A User\AppData\Roaming\npm\cursor-agent.cmd`, false},
		{"null", write(`{"cursorCliBinaryPath":null}`), "", false},
		{"BOM", write("\uFEFF{\"cursorCliBinaryPath\":\"/x\"}"), "/x", false},
		{"number", write(`{"cursorCliBinaryPath":1}`), "", true},
		{"not an object", write(`[1,2]`), "", true},
		{"malformed", write(`{"cursorCliBinaryPath":`), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := LoadSettings(tt.path)
			if tt.wantErr {
				require.Error(t, err)
				assert.Equal(t, failure.Setup, failure.KindOf(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, s.BinaryPath)
		})
	}
}

func TestSettingsStorePreservesOtherKeys(t *testing.T) {
	path := filepath.Join(testdir.New(t), "cfg", "settings.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(`{"theme":"dark","nested":{"a":[1,2]},"cursorCliBinaryPath":"/old"}`), 0o640))
	store := NewSettingsStore(path)
	assert.Equal(t, path, store.Path())

	require.NoError(t, store.SetBinaryPath(" /new/cursor-agent "))
	var raw map[string]any
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &raw))
	assert.Equal(t, map[string]any{"theme": "dark", "nested": map[string]any{"a": []any{1.0, 2.0}}, "cursorCliBinaryPath": "/new/cursor-agent"}, raw)

	s, err := store.Load()
	require.NoError(t, err)
	assert.Equal(t, "/new/cursor-agent", s.BinaryPath)

	require.NoError(t, store.SetBinaryPath(""))
	data, err = os.ReadFile(path)
	require.NoError(t, err)
	raw = nil
	require.NoError(t, json.Unmarshal(data, &raw))
	assert.NotContains(t, raw, "cursorCliBinaryPath", "clearing removes the key")
	assert.Equal(t, "dark", raw["theme"])

	s.BinaryPath = "/via/save"
	require.NoError(t, store.Save(s))
	s, err = LoadSettings(path)
	require.NoError(t, err)
	assert.Equal(t, "/via/save", s.BinaryPath)
}

func TestSettingsStoreNewFileAndRefusal(t *testing.T) {
	path := filepath.Join(testdir.New(t), "a", "b", "settings.json")
	store := NewSettingsStore(path)
	require.NoError(t, store.SetBinaryPath("/x"))
	s, err := LoadSettings(path)
	require.NoError(t, err)
	assert.Equal(t, "/x", s.BinaryPath)

	before, err := os.ReadFile(path)
	require.NoError(t, err)
	_, err = store.Update(func(s *Settings) error {
		s.BinaryPath = "/never"
		return failure.New(failure.Input, "refused")
	})
	require.Error(t, err)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after, "a refused update leaves the file untouched")

	require.NoError(t, os.WriteFile(path, []byte("{broken"), 0o600))
	err = store.SetBinaryPath("/y")
	require.Error(t, err, "a malformed file is reported, not overwritten")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "{broken", string(data))
}

func TestSettingsStoreConcurrentSaves(t *testing.T) {
	path := filepath.Join(testdir.New(t), "settings.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"keep":true}`), 0o600))
	store := NewSettingsStore(path)
	const savers = 50
	var wg sync.WaitGroup
	paths := make(map[string]bool, savers)
	for i := range savers {
		p := fmt.Sprintf(`C:\Program Files\Cursor %d\cursor-agent.exe`, i)
		paths[p] = true
		wg.Go(func() {
			assert.NoError(t, store.SetBinaryPath(p))
		})
	}
	// A reader racing the savers always sees a whole file.
	for range savers {
		s, err := LoadSettings(path)
		require.NoError(t, err)
		assert.True(t, s.BinaryPath == "" || paths[s.BinaryPath], "torn value %q", s.BinaryPath)
	}
	wg.Wait()
	s, err := store.Load()
	require.NoError(t, err)
	assert.True(t, paths[s.BinaryPath], "ends as one of the saved paths, got %q", s.BinaryPath)
	var raw map[string]any
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &raw))
	assert.Equal(t, true, raw["keep"])
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary files left behind")
}

func FuzzParseSettings(f *testing.F) {
	f.Add([]byte(`{"cursorCliBinaryPath":"C:\\Users\\A User\\x.cmd","other":[1]}`))
	f.Add([]byte("\uFEFF{}"))
	f.Add([]byte(`{"cursorCliBinaryPath":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parseSettings(data, "settings.json")
		if err != nil {
			if failure.KindOf(err) != failure.Setup {
				t.Fatalf("error of kind %s", failure.KindOf(err))
			}
			return
		}
		// What parses re-encodes and parses back to the same settings.
		out, err := s.marshal()
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		again, err := parseSettings(out, "settings.json")
		if err != nil {
			t.Fatalf("re-parse of %q: %v", out, err)
		}
		if again.BinaryPath != s.BinaryPath || len(again.other) != len(s.other) {
			t.Fatalf("round trip changed %+v into %+v", s, again)
		}
	})
}
