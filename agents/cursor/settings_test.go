package cursor

import (
	"encoding/json/v2"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

func TestLoadSettings(t *testing.T) {
	dir := testkit.TempDir(t)
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
		{"duplicate members are ambiguous", write(`{"cursorCliBinaryPath":"/a","cursorCliBinaryPath":"/b"}`), "", true},
		{"too large", write(`{"x":"` + strings.Repeat("a", maxSettingsFile) + `"}`), "", true},
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

func TestUpdateSettingsPreservesOtherKeys(t *testing.T) {
	path := filepath.Join(testkit.TempDir(t), "cfg", "settings.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(`{"theme":"dark","nested":{"a":[1,2]},"cursorCliBinaryPath":"/old"}`), 0o640))
	s, err := UpdateSettings(path, func(s *Settings) error {
		assert.Equal(t, "/old", s.BinaryPath)
		s.BinaryPath = "  /new/cursor-agent  "
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, "  /new/cursor-agent  ", s.BinaryPath, "what change set is returned as is")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "{\n  \"cursorCliBinaryPath\": \"/new/cursor-agent\",\n  \"nested\": {\n    \"a\": [\n      1,\n      2\n    ]\n  },\n  \"theme\": \"dark\"\n}\n", string(data))
	if info, err := os.Stat(path); err == nil && runtime.GOOS != "windows" {
		assert.Equal(t, os.FileMode(0o640), info.Mode().Perm(), "an existing file keeps its mode")
	}

	_, err = UpdateSettings(path, func(s *Settings) error { s.BinaryPath = ""; return nil })
	require.NoError(t, err)
	data, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.NotContains(t, string(data), "cursorCliBinaryPath", "an empty path clears the member")
	assert.Contains(t, string(data), `"theme": "dark"`)
}

func TestUpdateSettingsNewFileAndRefusal(t *testing.T) {
	path := filepath.Join(testkit.TempDir(t), "a", "b", "settings.json")
	setPath := func(p string) error {
		_, err := UpdateSettings(path, func(s *Settings) error { s.BinaryPath = p; return nil })
		return err
	}
	require.NoError(t, setPath("/x"))
	s, err := LoadSettings(path)
	require.NoError(t, err)
	assert.Equal(t, "/x", s.BinaryPath)
	if runtime.GOOS != "windows" {
		info, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "a new file is private")
	}

	before, err := os.ReadFile(path)
	require.NoError(t, err)
	_, err = UpdateSettings(path, func(s *Settings) error {
		s.BinaryPath = "/never"
		return failure.New(failure.Input, "refused")
	})
	require.Error(t, err)
	assert.Equal(t, failure.Input, failure.KindOf(err))
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after, "a refused update leaves the file untouched")

	require.NoError(t, os.WriteFile(path, []byte("{broken"), 0o600))
	err = setPath("/y")
	require.Error(t, err, "a malformed file is reported, not overwritten")
	assert.Equal(t, failure.Setup, failure.KindOf(err))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "{broken", string(data))
}

// TestUpdateSettingsConcurrent: updates serialized by the caller never lose
// another member, and a reader racing them always sees a whole file.
func TestUpdateSettingsConcurrent(t *testing.T) {
	path := filepath.Join(testkit.TempDir(t), "settings.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"keep":true}`), 0o600))
	const savers = 50
	var mu sync.Mutex
	var wg sync.WaitGroup
	paths := make(map[string]bool, savers)
	for i := range savers {
		p := fmt.Sprintf(`C:\Program Files\Cursor %d\cursor-agent.exe`, i)
		paths[p] = true
		wg.Go(func() {
			mu.Lock()
			defer mu.Unlock()
			_, err := UpdateSettings(path, func(s *Settings) error { s.BinaryPath = p; return nil })
			assert.NoError(t, err)
		})
	}
	for range savers {
		s, err := LoadSettings(path)
		require.NoError(t, err)
		assert.True(t, s.BinaryPath == "" || paths[s.BinaryPath], "torn value %q", s.BinaryPath)
	}
	wg.Wait()
	s, err := LoadSettings(path)
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
