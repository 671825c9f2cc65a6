package task

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

const chatSession = "ac437fdf-3e7e-4a54-98a4-7bb04fd3efc6"

// writeFiles makes files (path: content) under root.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o700))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o600))
	}
}

func TestCopyChat(t *testing.T) {
	hash := "e4e90b7bcae743c9a1a1a045a49e1b1d"
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  ChatCopy
		// copied are the files that must be in the new home, absent those
		// that must not.
		copied, absent []string
	}{
		{"the session's directory", map[string]string{
			".cursor/chats/" + hash + "/" + chatSession + "/store.db":     "db",
			".cursor/chats/" + hash + "/" + chatSession + "/store.db-wal": "wal",
			".cursor/chats/" + hash + "/other-session/store.db":           "other",
			".cursor/cli-config.json":                                     "{}",
		}, ChatSession, []string{".cursor/chats/" + hash + "/" + chatSession + "/store.db", ".cursor/chats/" + hash + "/" + chatSession + "/store.db-wal"},
			[]string{".cursor/chats/" + hash + "/other-session/store.db"}},
		{"the newer .config/cursor location", map[string]string{
			".config/cursor/chats/" + hash + "/" + chatSession + "/store.db": "db",
		}, ChatSession, []string{".config/cursor/chats/" + hash + "/" + chatSession + "/store.db"}, nil},
		{"not found: every chat tree (the fallback)", map[string]string{
			".cursor/chats/" + hash + "/other/store.db":    "x",
			".config/cursor/chats/x/y/z/store.db":          "y",
			".cursor/projects/p/agent-transcripts/t.jsonl": "t",
		}, ChatAll, []string{".cursor/chats/" + hash + "/other/store.db", ".config/cursor/chats/x/y/z/store.db"},
			[]string{".cursor/projects/p/agent-transcripts/t.jsonl"}},
		{"no chats at all", map[string]string{".cursor/cli-config.json": "{}"}, ChatNone, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from, to := testkit.TempDir(t), testkit.TempDir(t)
			writeFiles(t, from, tc.files)
			got, err := CopyChat(from, to, chatSession)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			for _, p := range tc.copied {
				data, err := os.ReadFile(filepath.Join(to, filepath.FromSlash(p)))
				require.NoError(t, err, p)
				assert.Equal(t, tc.files[p], string(data))
			}
			for _, p := range tc.absent {
				assert.NoFileExists(t, filepath.Join(to, filepath.FromSlash(p)))
			}
			assertNoTemp(t, to)
		})
	}
}

func assertNoTemp(t *testing.T, root string) {
	t.Helper()
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			assert.False(t, strings.HasSuffix(d.Name(), ".tmp"), p)
		}
		return nil
	})
}

func TestCopyChatRefuses(t *testing.T) {
	hash := "e4e90b7bcae743c9a1a1a045a49e1b1d"
	outside := testkit.TempDir(t)
	writeFiles(t, outside, map[string]string{"secret": "s", chatSession + "/store.db": "x"})
	type setup func(t *testing.T, from string)
	link := func(target, at string) setup {
		return func(t *testing.T, from string) {
			p := filepath.Join(from, filepath.FromSlash(at))
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
			if err := os.Symlink(target, p); err != nil {
				t.Skipf("no symbolic links here: %v", err)
			}
		}
	}
	for _, tc := range []struct {
		name    string
		session string
		setup   setup
		kind    failure.Kind
	}{
		{"a link to a file outside", chatSession, link(filepath.Join(outside, "secret"), ".cursor/chats/"+hash+"/"+chatSession+"/store.db"), failure.Setup},
		{"a linked chats root", chatSession, link(outside, ".cursor/chats"), failure.Setup},
		{"a linked .cursor", chatSession, link(outside, ".cursor"), failure.Setup},
		{"a linked hash directory in the fallback", "missing", link(outside, ".cursor/chats/"+hash), failure.Setup},
		{"a linked hash directory holding the session", chatSession, link(outside, ".cursor/chats/0123"), failure.Setup},
		{"a path as session", "../../x", nil, failure.Input},
		{"an empty session", "", nil, failure.Input},
		{"dot-dot", "..", nil, failure.Input},
		{"a control character", "a\nb", nil, failure.Input},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from, to := testkit.TempDir(t), testkit.TempDir(t)
			writeFiles(t, from, map[string]string{".cursor/chats/" + hash + "/" + chatSession + "/meta": "m"})
			if tc.setup != nil {
				if runtime.GOOS == "windows" {
					t.Skip("symbolic links need a privilege on Windows")
				}
				if strings.HasSuffix(tc.name, "root") || strings.HasSuffix(tc.name, ".cursor") {
					require.NoError(t, os.RemoveAll(filepath.Join(from, ".cursor")))
				}
				if strings.Contains(tc.name, "hash directory") {
					require.NoError(t, os.RemoveAll(filepath.Join(from, ".cursor", "chats", hash)))
				}
				tc.setup(t, from)
			}
			_, err := CopyChat(from, to, tc.session)
			assert.Equal(t, tc.kind, failure.KindOf(err), "%v", err)
			entries, rerr := os.ReadDir(to)
			require.NoError(t, rerr)
			assert.Empty(t, entries, "nothing is copied")
		})
	}
	t.Run("an existing destination", func(t *testing.T) {
		from, to := testkit.TempDir(t), testkit.TempDir(t)
		writeFiles(t, from, map[string]string{".cursor/chats/" + hash + "/" + chatSession + "/store.db": "new"})
		writeFiles(t, to, map[string]string{".cursor/chats/" + hash + "/" + chatSession + "/store.db": "old"})
		_, err := CopyChat(from, to, chatSession)
		assert.Equal(t, failure.Setup, failure.KindOf(err))
		data, err := os.ReadFile(filepath.Join(to, ".cursor", "chats", hash, chatSession, "store.db"))
		require.NoError(t, err)
		assert.Equal(t, "old", string(data))
	})
}

func FuzzCheckSessionID(f *testing.F) {
	f.Add(chatSession)
	f.Add("../x")
	f.Add("a:b")
	f.Fuzz(func(t *testing.T, s string) {
		if checkSessionID(s) != nil {
			return
		}
		// A valid session id is one entry name of a directory.
		if filepath.Base(s) != s || s == "." || s == ".." || strings.ContainsAny(s, `/\:`) || filepath.IsAbs(s) || filepath.VolumeName(s) != "" {
			t.Fatalf("accepted %q", s)
		}
	})
}
