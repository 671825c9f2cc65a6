package cursor

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/turn"
)

// TestSandboxedArgs: the task profile's exact argv per mode, and its
// refusals (docs/contract.md, "The task profile").
func TestSandboxedArgs(t *testing.T) {
	head := []string{"--print", "--output-format", "stream-json"}
	profile := []string{"--sandbox", "enabled", "--disable-project-configs", "--single-turn", "--disable-auto-update", "--allowed-tools"}
	askTools := "read_tool_call,grep_tool_call,glob_tool_call,ls_tool_call"
	writeTools := askTools + ",edit_tool_call,delete_tool_call,shell_tool_call,update_todos_tool_call,read_todos_tool_call"
	join := func(parts ...[]string) []string {
		var all []string
		for _, p := range parts {
			all = append(all, p...)
		}
		return all
	}
	tests := []struct {
		name string
		req  Turn
		want []string
		err  string
	}{
		{name: "consult", req: Turn{Mode: turn.ModeAsk, Sandboxed: true},
			want: join(head, profile, []string{askTools, "--mode", "ask", "--trust"})},
		{name: "write", req: Turn{Mode: turn.ModeWrite, Sandboxed: true},
			want: join(head, profile, []string{writeTools, "--trust"})},
		{name: "partial output, model, resume", req: Turn{Mode: turn.ModeAsk, Sandboxed: true, PartialOutput: true, Model: "gpt-5", Resume: "s-1"},
			want: join(head, []string{"--stream-partial-output"}, profile, []string{askTools, "--mode", "ask", "--trust", "--model", "gpt-5", "--resume", "s-1"})},
		{name: "plan cannot be sandboxed", req: Turn{Mode: turn.ModePlan, Sandboxed: true}, err: "plan mode cannot run sandboxed"},
		{name: "no mode is plan", req: Turn{Sandboxed: true}, err: "cannot run sandboxed"},
		{name: "extra tools are refused", req: Turn{Mode: turn.ModeWrite, Sandboxed: true, Tools: []string{"mcp"}}, err: "takes no extra tools"},
		{name: "unknown mode", req: Turn{Mode: "yolo", Sandboxed: true}, err: "unknown mode"},
		{name: "auto model", req: Turn{Mode: turn.ModeAsk, Sandboxed: true, Model: "auto"}, err: "is refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Args(tt.req)
			if tt.err != "" {
				require.Error(t, err)
				assert.Equal(t, failure.Input, failure.KindOf(err))
				assert.Contains(t, err.Error(), tt.err)
				if tt.req.Model == "" {
					_, derr := NewDecoder(tt.req)
					assert.Equal(t, failure.Input, failure.KindOf(derr), "the decoder refuses the turns Args refuses")
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			for _, never := range []string{"--force", "--yolo", "--auto-review", "--approve-mcps", "--worktree", "--plugin-dir", "--add-dir", "--mode plan"} {
				assert.NotContains(t, strings.Join(got, " "), never)
			}
		})
	}
}

func TestSandboxedTools(t *testing.T) {
	assert.Equal(t, []string{"read_tool_call", "grep_tool_call", "glob_tool_call", "ls_tool_call"}, SandboxedTools(turn.ModeAsk))
	assert.Equal(t, []string{"read_tool_call", "grep_tool_call", "glob_tool_call", "ls_tool_call", "edit_tool_call",
		"delete_tool_call", "shell_tool_call", "update_todos_tool_call", "read_todos_tool_call"}, SandboxedTools(turn.ModeWrite))
	assert.Nil(t, SandboxedTools(turn.ModePlan))
	assert.Nil(t, SandboxedTools(""))
	assert.NotContains(t, SandboxedTools(turn.ModeWrite), "write_tool_call", "the contract's write list has no write_tool_call")
	// One table: every contract name maps to the stream key the decoder
	// reads, snake case to lower camel case plus "ToolCall", but write,
	// which is edit's (creating a file is an edit).
	for _, e := range modeTools() {
		if e.name == "write" {
			assert.Equal(t, "edit_tool_call", e.contract)
			continue
		}
		assert.Equal(t, e.contract, snake(e.name)+"_tool_call")
	}
}

func snake(camel string) string {
	var b strings.Builder
	for _, r := range camel {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestSandboxedDecoderPolicy: a sandboxed turn's Decoder allows exactly
// its mode's list; anything else is policy at once.
func TestSandboxedDecoderPolicy(t *testing.T) {
	call := func(key string) string {
		return `{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"` + key + `":{"args":{}}}}`
	}
	tests := []struct {
		mode    turn.Mode
		key     string
		allowed bool
	}{
		{turn.ModeAsk, "readToolCall", true},
		{turn.ModeAsk, "grepToolCall", true},
		{turn.ModeAsk, "globToolCall", true},
		{turn.ModeAsk, "lsToolCall", true},
		{turn.ModeAsk, "editToolCall", false},
		{turn.ModeAsk, "shellToolCall", false},
		{turn.ModeAsk, "updateTodosToolCall", false},
		{turn.ModeWrite, "editToolCall", true},
		{turn.ModeWrite, "deleteToolCall", true},
		{turn.ModeWrite, "shellToolCall", true},
		{turn.ModeWrite, "updateTodosToolCall", true},
		{turn.ModeWrite, "readTodosToolCall", true},
		{turn.ModeWrite, "writeToolCall", true}, // creating a file is an edit
		{turn.ModeAsk, "writeToolCall", false},
		{turn.ModeWrite, "mcpToolCall", false},
		{turn.ModeWrite, "webSearchToolCall", false},
		{turn.ModeWrite, "webFetchToolCall", false},
		{turn.ModeWrite, "semSearchToolCall", false},
		{turn.ModeWrite, "taskToolCall", false},
		{turn.ModeAsk, "getMcpToolsToolCall", false},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode)+"/"+tt.key, func(t *testing.T) {
			d := newDecoder(t, Turn{Mode: tt.mode, Sandboxed: true})
			r := feedAll(t, d, seq(initLine, call(tt.key)))
			if tt.allowed {
				require.NoError(t, r.err)
				return
			}
			require.Error(t, r.err)
			assert.Equal(t, failure.Policy, failure.KindOf(r.err))
			assert.Contains(t, r.err.Error(), "the sandboxed "+string(tt.mode)+" mode does not allow")
		})
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, v))
}

// TestWritePrivateHome: the files, their contents parsed back, the modes,
// and the keychain link on macOS only.
func TestWritePrivateHome(t *testing.T) {
	ws := filepath.Join(testkit.TempDir(t), "ws")
	abs := func(p string) string { return filepath.Join(testkit.TempDir(t), p) }
	rt, common, gitdir := abs("go"), abs("repo.git"), abs("repo.git/worktrees/ws")
	tests := []struct {
		name        string
		spec        HomeSpec
		goos        string
		typ         string
		readonly    []string
		readwrite   []string
		allow, deny []string
		link        bool
	}{
		{name: "consult", spec: HomeSpec{Mode: turn.ModeAsk, Workspace: ws, RuntimeRoot: rt, GitCommonDir: common, GitDir: gitdir},
			goos: "linux", typ: "workspace_readonly", readonly: []string{}, readwrite: []string{},
			allow: []string{"Read(**)"}, deny: []string{"Write(**)", "Shell(**)", "Mcp(*, *)", "WebFetch(*)"}},
		{name: "write in a linked worktree", spec: HomeSpec{Mode: turn.ModeWrite, Workspace: ws, RuntimeRoot: rt, GitCommonDir: common, GitDir: gitdir},
			goos: "linux", typ: "workspace_readwrite", readonly: []string{rt, common}, readwrite: []string{gitdir},
			allow: []string{"Read(**)", "Write(**)", "Shell(**)"}, deny: []string{"Mcp(*, *)", "WebFetch(*)"}},
		{name: "write in a main worktree", spec: HomeSpec{Mode: turn.ModeWrite, Workspace: ws, GitCommonDir: common, GitDir: common},
			goos: "linux", typ: "workspace_readwrite", readonly: []string{}, readwrite: []string{},
			allow: []string{"Read(**)", "Write(**)", "Shell(**)"}, deny: []string{"Mcp(*, *)", "WebFetch(*)"}},
		{name: "keychain ignored off macOS", spec: HomeSpec{Mode: turn.ModeAsk, Workspace: ws, KeychainDir: abs("Keychains")},
			goos: "linux", typ: "workspace_readonly", readonly: []string{}, readwrite: []string{},
			allow: []string{"Read(**)"}, deny: []string{"Write(**)", "Shell(**)", "Mcp(*, *)", "WebFetch(*)"}},
		{name: "keychain linked on macOS", spec: HomeSpec{Mode: turn.ModeAsk, Workspace: ws, KeychainDir: abs("Keychains")},
			goos: "darwin", typ: "workspace_readonly", readonly: []string{}, readwrite: []string{}, link: true,
			allow: []string{"Read(**)"}, deny: []string{"Write(**)", "Shell(**)", "Mcp(*, *)", "WebFetch(*)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.link && runtime.GOOS == "windows" {
				t.Skip("symbolic links need a privilege on Windows; the link is made on macOS only")
			}
			home := filepath.Join(testkit.TempDir(t), "runs", "job", "home")
			require.NoError(t, writePrivateHome(home, tt.spec, tt.goos))

			var cfg struct {
				Version     int             `json:"version"`
				Editor      map[string]bool `json:"editor"`
				Permissions struct {
					Allow []string `json:"allow"`
					Deny  []string `json:"deny"`
				} `json:"permissions"`
			}
			readJSON(t, filepath.Join(home, ".cursor", "cli-config.json"), &cfg)
			assert.Equal(t, 1, cfg.Version)
			assert.Equal(t, map[string]bool{"vimMode": false}, cfg.Editor)
			assert.Equal(t, tt.allow, cfg.Permissions.Allow)
			assert.Equal(t, tt.deny, cfg.Permissions.Deny)

			var sb map[string]jsontext.Value
			readJSON(t, filepath.Join(home, ".cursor", "sandbox.json"), &sb)
			var typ, boundary string
			var ro, rw []string
			var net map[string]string
			require.NoError(t, json.Unmarshal(sb["type"], &typ))
			require.NoError(t, json.Unmarshal(sb["readBoundary"], &boundary))
			require.NoError(t, json.Unmarshal(sb["additionalReadonlyPaths"], &ro))
			require.NoError(t, json.Unmarshal(sb["additionalReadwritePaths"], &rw))
			require.NoError(t, json.Unmarshal(sb["networkPolicy"], &net))
			assert.Equal(t, tt.typ, typ)
			assert.Equal(t, "workspace", boundary)
			assert.Equal(t, tt.readonly, ro)
			assert.Equal(t, tt.readwrite, rw)
			assert.Equal(t, map[string]string{"default": "deny"}, net)

			var got []string
			require.NoError(t, filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
				require.NoError(t, err)
				rel, _ := filepath.Rel(home, p)
				got = append(got, filepath.ToSlash(rel))
				return nil
			}))
			want := []string{".", ".agents", ".agents/skills", ".cursor", ".cursor/cli-config.json", ".cursor/plugins",
				".cursor/sandbox.json", ".cursor/skills", ".cursor/skills-cursor"}
			if tt.link {
				want = append(want, "Library", "Library/Keychains")
			}
			assert.Equal(t, want, got, "the home holds only the profile's files")

			if tt.link {
				target, err := os.Readlink(filepath.Join(home, "Library", "Keychains"))
				require.NoError(t, err)
				assert.Equal(t, tt.spec.KeychainDir, target, "a link, never a copy")
			}
			if runtime.GOOS == "windows" {
				return // POSIX modes do not apply
			}
			mode := func(rel string) fs.FileMode {
				info, err := os.Lstat(filepath.Join(home, filepath.FromSlash(rel)))
				require.NoError(t, err)
				return info.Mode().Perm()
			}
			assert.Equal(t, fs.FileMode(0o700), mode("."))
			assert.Equal(t, fs.FileMode(0o600), mode(".cursor/cli-config.json"))
			assert.Equal(t, fs.FileMode(0o600), mode(".cursor/sandbox.json"))
			for _, dir := range emptyHomeDirs() {
				assert.Equal(t, fs.FileMode(0o500), mode(dir), dir)
			}
		})
	}
}

func TestWritePrivateHomeRefuses(t *testing.T) {
	ws := testkit.TempDir(t)
	full := testkit.TempDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(full, "chat"), []byte("x"), 0o600))
	file := filepath.Join(testkit.TempDir(t), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	tests := []struct {
		name string
		home string
		spec HomeSpec
		err  string
	}{
		{name: "a home that is not empty", home: full, spec: HomeSpec{Mode: turn.ModeAsk, Workspace: ws}, err: "already exists and is not empty"},
		{name: "a home that is a file", home: file, spec: HomeSpec{Mode: turn.ModeAsk, Workspace: ws}, err: "is not a directory"},
		{name: "plan", home: filepath.Join(testkit.TempDir(t), "h"), spec: HomeSpec{Mode: turn.ModePlan, Workspace: ws}, err: "ask or write mode"},
		{name: "no workspace", home: filepath.Join(testkit.TempDir(t), "h"), spec: HomeSpec{Mode: turn.ModeAsk}, err: "workspace must be an absolute path"},
		{name: "relative home", home: "home", spec: HomeSpec{Mode: turn.ModeAsk, Workspace: ws}, err: "home must be an absolute path"},
		{name: "relative runtime root", home: filepath.Join(testkit.TempDir(t), "h"), spec: HomeSpec{Mode: turn.ModeWrite, Workspace: ws, RuntimeRoot: "go"},
			err: "runtime root must be an absolute path"},
		{name: "a control character", home: filepath.Join(testkit.TempDir(t), "h"), spec: HomeSpec{Mode: turn.ModeWrite, Workspace: ws + "\n"},
			err: "control character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := WritePrivateHome(tt.home, tt.spec)
			require.Error(t, err)
			assert.Equal(t, failure.Input, failure.KindOf(err))
			assert.Contains(t, err.Error(), tt.err)
		})
	}
	entries, err := os.ReadDir(full)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "a refused home is left as it was")

	empty := filepath.Join(testkit.TempDir(t), "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))
	require.NoError(t, WritePrivateHome(empty, HomeSpec{Mode: turn.ModeAsk, Workspace: ws}), "an existing empty directory is fine")
}

// TestCreateFileNeverReplaces: a private home's file is created, never
// written over one already there (a file, or a symbolic link, which is
// not followed), and what was there stays as it was.
func TestCreateFileNeverReplaces(t *testing.T) {
	dir := testkit.TempDir(t)
	existing := filepath.Join(dir, "existing")
	require.NoError(t, os.WriteFile(existing, []byte("operator's"), 0o600))
	link := filepath.Join(dir, "link")
	linked := filepath.Join(dir, "linked")
	canLink := os.Symlink(linked, link) == nil // Windows without the privilege: no link
	tests := []struct {
		name, path string
		skip       bool
	}{
		{name: "a file", path: existing},
		{name: "a link to a missing file", path: link, skip: !canLink},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skip {
				t.Skip("this system made no symbolic link")
			}
			if tt.path == link {
				testkit.SkipIfWine(t, "Wine's CREATE_NEW creates the missing target of a symbolic link; Windows refuses the existing link")
			}
			require.ErrorIs(t, createFile(tt.path, []byte("new")), fs.ErrExist)
		})
	}
	data, err := os.ReadFile(existing)
	require.NoError(t, err)
	assert.Equal(t, "operator's", string(data))
	_, err = os.Lstat(linked)
	assert.ErrorIs(t, err, fs.ErrNotExist, "the link's target was not created")

	created := filepath.Join(dir, "sub", "new.json")
	require.NoError(t, createFile(created, []byte("{}\n")))
	data, err = os.ReadFile(created)
	require.NoError(t, err)
	assert.Equal(t, "{}\n", string(data))
	if runtime.GOOS != "windows" {
		info, err := os.Stat(created)
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o600), info.Mode().Perm())
	}
}

// TestProjectHooks: one warning per hook file with a non-empty hooks
// object; unreadable or invalid files get a warning, never a failure.
func TestProjectHooks(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		dirs  []string
		want  []string
	}{
		{name: "no files"},
		{name: "cursor hooks", files: map[string]string{".cursor/hooks.json": `{"version":1,"hooks":{"afterFileEdit":[{"command":"./fmt.sh"}]}}`},
			want: []string{"project hooks in .cursor/hooks.json run outside the sandbox"}},
		{name: "every file", files: map[string]string{
			".cursor/hooks.json":          `{"hooks":{"stop":[]}}`,
			".claude/settings.json":       "\ufeff" + `{"hooks":{"PreToolUse":[{"matcher":"Bash"}]}}`,
			".claude/settings.local.json": `{"permissions":{},"hooks":{"Stop":[]}}`,
		}, want: []string{
			"project hooks in .cursor/hooks.json run outside the sandbox",
			"project hooks in .claude/settings.json run outside the sandbox",
			"project hooks in .claude/settings.local.json run outside the sandbox",
		}},
		{name: "empty or absent hooks", files: map[string]string{
			".cursor/hooks.json":    `{"version":1,"hooks":{}}`,
			".claude/settings.json": `{"permissions":{"allow":[]}}`,
		}},
		{name: "hooks that are not an object", files: map[string]string{".claude/settings.json": `{"hooks":["x"]}`}},
		{name: "invalid JSON", files: map[string]string{".claude/settings.local.json": `{"hooks":`},
			want: []string{"cannot check .claude/settings.local.json for project hooks (not a JSON object); hooks there would run outside the sandbox"}},
		{name: "not an object", files: map[string]string{".cursor/hooks.json": `[]`},
			want: []string{"cannot check .cursor/hooks.json for project hooks (not a JSON object); hooks there would run outside the sandbox"}},
		{name: "a directory", dirs: []string{".cursor/hooks.json"},
			want: []string{"cannot check .cursor/hooks.json for project hooks (it is not a regular file); hooks there would run outside the sandbox"}},
		{name: "too large", files: map[string]string{".claude/settings.json": `{"hooks":{"a":1}, "x":"` + strings.Repeat("x", 1<<20) + `"}`},
			want: []string{"cannot check .claude/settings.json for project hooks (it is larger than 1048576 bytes); hooks there would run outside the sandbox"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := testkit.TempDir(t)
			for rel, content := range tt.files {
				p := filepath.Join(ws, filepath.FromSlash(rel))
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
				require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
			}
			for _, rel := range tt.dirs {
				require.NoError(t, os.MkdirAll(filepath.Join(ws, filepath.FromSlash(rel)), 0o700))
			}
			assert.Equal(t, tt.want, ProjectHooks(ws))
		})
	}
}

// FuzzHasHooks: the hooks check never panics, accepts only JSON objects,
// and finds hooks exactly when "hooks" is a non-empty object.
func FuzzHasHooks(f *testing.F) {
	for _, s := range []string{`{"hooks":{"a":[]}}`, `{"hooks":{}}`, `{}`, `[]`, `null`, `{"hooks":`, "\ufeff{\"hooks\":{\"x\":1}}",
		`{"hooks":{"a":1},"hooks":{}}`, `{"hooks":[1]}`, `"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		has, err := hasHooks(data)
		if err != nil {
			assert.False(t, has)
			return
		}
		var doc map[string]any
		require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(string(data), "\ufeff")), &doc))
		hooks, isObj := doc["hooks"].(map[string]any)
		assert.Equal(t, isObj && len(hooks) > 0, has)
	})
}

// FuzzSandboxedArgs: whatever the turn, a sandboxed argv never carries a
// forbidden flag, and the decoder accepts exactly the turns Args accepts.
func FuzzSandboxedArgs(f *testing.F) {
	f.Add("ask", "", "", "", true)
	f.Add("write", "gpt-5", "s", "mcp", false)
	f.Add("plan", "", "", "", false)
	f.Fuzz(func(t *testing.T, mode, model, resume, tool string, partial bool) {
		req := Turn{Mode: turn.Mode(mode), Model: model, Resume: resume, PartialOutput: partial, Sandboxed: true}
		if tool != "" {
			req.Tools = []string{tool}
		}
		args, err := Args(req)
		_, derr := NewDecoder(req)
		if err != nil {
			assert.Equal(t, failure.Input, failure.KindOf(err))
			return
		}
		require.NoError(t, derr)
		for _, a := range args {
			switch a {
			case "--force", "--yolo", "--auto-review", "--approve-mcps", "--worktree", "--plugin-dir", "--add-dir":
				t.Fatalf("forbidden argument %q in %q", a, args)
			}
		}
		for i, a := range args {
			if a == "--mode" {
				assert.Equal(t, "ask", args[i+1])
			}
		}
		assert.Contains(t, args, "--sandbox")
	})
}
