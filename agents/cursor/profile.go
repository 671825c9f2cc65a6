package cursor

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/safefile"
	"github.com/cursorkit/cursorkit/turn"
)

// modeTool is one tool a mode allows: the name the decoder sees (the
// stream's tool key without its "ToolCall" suffix) and the name the task
// profile's contract and --allowed-tools use.
type modeTool struct {
	name     string // read (the stream key is readToolCall)
	contract string // read_tool_call
	write    bool   // only turn.ModeWrite allows it
}

// modeTools is the one table of the tools the modes allow, in the task
// profile's order (docs/contract.md, "The task profile"). Cursor reports
// a file it creates as a write tool call: creating a file is an edit, so
// write is allowed where edit is, under edit's contract name (the
// contract has no write_tool_call).
func modeTools() []modeTool {
	return []modeTool{
		{"read", "read_tool_call", false},
		{"grep", "grep_tool_call", false},
		{"glob", "glob_tool_call", false},
		{"ls", "ls_tool_call", false},
		{"edit", "edit_tool_call", true},
		{"write", "edit_tool_call", true},
		{"delete", "delete_tool_call", true},
		{"shell", "shell_tool_call", true},
		{"updateTodos", "update_todos_tool_call", true},
		{"readTodos", "read_todos_tool_call", true},
	}
}

// SandboxedTools returns the tools a Sandboxed turn of mode m may use, by
// the names the companion contract and --allowed-tools give them
// ("read_tool_call", ...), in the contract's order: four read-only tools
// for turn.ModeAsk (consult, review), nine for turn.ModeWrite. Any other
// mode, which cannot be sandboxed, has none (nil).
func SandboxedTools(m turn.Mode) []string {
	if m != turn.ModeAsk && m != turn.ModeWrite {
		return nil
	}
	var names []string
	for _, e := range modeTools() {
		if (!e.write || m == turn.ModeWrite) && !slices.Contains(names, e.contract) {
			names = append(names, e.contract)
		}
	}
	return names
}

// HomeSpec describes the private home of one sandboxed turn
// (docs/contract.md, "The task profile"). Every path must be absolute.
type HomeSpec struct {
	// Mode is turn.ModeAsk (consult, review: workspace_readonly) or
	// turn.ModeWrite (write: workspace_readwrite).
	Mode turn.Mode
	// Workspace is the agent's working directory; reads are bounded to it.
	Workspace string
	// RuntimeRoot is the language runtime's installation root (GOROOT, a
	// Node.js prefix...), exposed read-only in turn.ModeWrite; "" exposes
	// none. The caller chooses it.
	RuntimeRoot string
	// GitCommonDir and GitDir are the workspace's git directories, as
	// `git rev-parse --git-common-dir` and `--git-dir` print them (package
	// task reads them from .git without running git). When both are set
	// and differ (a linked worktree), turn.ModeWrite exposes the common dir
	// read-only and the worktree's own git dir read-write.
	GitCommonDir, GitDir string
	// KeychainDir is the user's keychain directory (~/Library/Keychains).
	// On macOS the home gets Library/Keychains as a symbolic link to it,
	// never a copy; "" makes no link. Other systems ignore it.
	KeychainDir string
	// Model and ModelChanged are the user's own model choice
	// (UserModelChoice), carried into the private config, that setting
	// alone; a nil Model carries none.
	Model        jsontext.Value
	ModelChanged bool
}

// homeConfigLimit bounds what is read of a workspace's configuration file.
const homeConfigLimit = 1 << 20

// emptyHomeDirs are the plugin and skill directories Cursor reads under
// the home, created empty and read-only (0500).
func emptyHomeDirs() []string {
	return []string{".cursor/plugins", ".cursor/skills", ".cursor/skills-cursor", ".agents/skills"}
}

// WritePrivateHome creates home (0700) as the private HOME of a sandboxed
// turn: .cursor/cli-config.json (permissions that allow the mode's tools
// and deny the rest), .cursor/sandbox.json (the mode's sandbox policy, no
// network), empty read-only (0500) plugin and skill directories, and on
// macOS a symbolic link to spec.KeychainDir. Files are created 0600, never
// over an existing one, and not synced: each run makes a home of its own
// that nothing reads before its agent starts, so a machine's crash leaves
// at worst a torn file in a home no run uses again (its job is then died).
// A home that exists and is not an empty directory, and a bad spec, are
// failure.Input errors; nothing is written then. Other failures are
// failure.Setup.
func WritePrivateHome(home string, spec HomeSpec) error {
	return writePrivateHome(home, spec, runtime.GOOS)
}

func writePrivateHome(home string, spec HomeSpec, goos string) error {
	if err := spec.check(home); err != nil {
		return err
	}
	if entries, err := os.ReadDir(home); err == nil {
		if len(entries) > 0 {
			return failure.New(failure.Input, "the private home %s already exists and is not empty", turn.Quote(home, 200))
		}
	} else if info, statErr := os.Lstat(home); statErr == nil {
		return failure.New(failure.Input, "the private home %s exists and is not a directory (%s)", turn.Quote(home, 200), info.Mode().Type())
	} else if !errors.Is(statErr, fs.ErrNotExist) {
		return setupErr("cannot inspect the private home", statErr)
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return setupErr("cannot create the private home", err)
	}
	if err := os.Chmod(home, 0o700); err != nil && runtime.GOOS != "windows" {
		return setupErr("cannot make the private home private", err)
	}
	files := []struct {
		rel string
		v   any
	}{
		{".cursor/cli-config.json", cliConfig(spec)},
		{".cursor/sandbox.json", sandboxPolicy(spec)},
	}
	for _, f := range files {
		data, err := json.Marshal(f.v, jsontext.WithIndent("  "))
		if err != nil {
			return setupErr("cannot encode "+f.rel, err)
		}
		if err := createFile(filepath.Join(home, filepath.FromSlash(f.rel)), append(data, '\n')); err != nil {
			return setupErr("cannot write "+f.rel+" in the private home", err)
		}
	}
	for _, rel := range emptyHomeDirs() {
		dir := filepath.Join(home, filepath.FromSlash(rel))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return setupErr("cannot create "+rel+" in the private home", err)
		}
		if err := os.Chmod(dir, 0o500); err != nil && runtime.GOOS != "windows" {
			return setupErr("cannot make "+rel+" read-only", err)
		}
	}
	if goos == "darwin" && spec.KeychainDir != "" {
		link := filepath.Join(home, "Library", "Keychains")
		if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
			return setupErr("cannot create Library in the private home", err)
		}
		if err := os.Symlink(spec.KeychainDir, link); err != nil {
			return setupErr("cannot link the keychain into the private home", err)
		}
	}
	return nil
}

// createFile creates the file at path (its directory 0700 when missing)
// with data, 0600; an existing file is an error, never replaced, and a
// file it could not write whole is removed.
func createFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err = errors.Join(err, f.Close()); err != nil {
		_ = os.Remove(path)
	}
	return err
}

// check refuses a spec WritePrivateHome cannot honour.
func (spec HomeSpec) check(home string) error {
	if spec.Mode != turn.ModeAsk && spec.Mode != turn.ModeWrite {
		return failure.New(failure.Input, "a private home is for the ask or write mode, not %s", turn.Quote(string(spec.Mode), 40))
	}
	paths := []struct{ what, p string }{{"home", home}, {"workspace", spec.Workspace}}
	for _, o := range []struct{ what, p string }{{"runtime root", spec.RuntimeRoot}, {"git common dir", spec.GitCommonDir},
		{"git dir", spec.GitDir}, {"keychain dir", spec.KeychainDir}} {
		if o.p != "" {
			paths = append(paths, o)
		}
	}
	for _, o := range paths {
		if o.p == "" || !filepath.IsAbs(o.p) {
			return failure.New(failure.Input, "the private home's %s must be an absolute path", o.what)
		}
		if strings.ContainsFunc(o.p, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			return failure.New(failure.Input, "the private home's %s holds a control character", o.what)
		}
	}
	return nil
}

func setupErr(msg string, err error) error {
	return &failure.Error{Kind: failure.Setup, Message: msg, Detail: err.Error(), Err: err}
}

// cliPermissions and cliConfigDoc are the generated cli-config.json: the
// members Cursor documents as required (version, editor.vimMode,
// permissions.allow, permissions.deny).
type cliPermissions struct {
	Allow []string `json:"allow"`
	Deny  []string `json:"deny"`
}

type cliConfigDoc struct {
	Version     int             `json:"version"`
	Editor      map[string]bool `json:"editor"`
	Permissions cliPermissions  `json:"permissions"`
	// Model and HasChangedDefaultModel are the user's model choice.
	Model                  jsontext.Value `json:"model,omitzero"`
	HasChangedDefaultModel bool           `json:"hasChangedDefaultModel,omitzero"`
}

// cliConfig returns the permissions that match mode's allowlist: reads in
// the workspace (relative patterns are workspace-scoped) for every mode,
// writes and shell commands in turn.ModeWrite; everything else denied. The
// user's model choice comes along.
func cliConfig(spec HomeSpec) cliConfigDoc {
	mode := spec.Mode
	allow := []string{"Read(**)"}
	deny := []string{"Mcp(*, *)", "WebFetch(*)"}
	if mode == turn.ModeWrite {
		allow = append(allow, "Write(**)", "Shell(**)")
	} else {
		deny = append([]string{"Write(**)", "Shell(**)"}, deny...)
	}
	return cliConfigDoc{Version: 1, Editor: map[string]bool{"vimMode": false},
		Permissions: cliPermissions{Allow: allow, Deny: deny}, Model: spec.Model, HasChangedDefaultModel: spec.ModelChanged}
}

// sandboxDoc is the generated sandbox.json (cursor.com/docs/reference/sandbox.md).
type sandboxDoc struct {
	Type                     string        `json:"type"`
	ReadBoundary             string        `json:"readBoundary"`
	AdditionalReadonlyPaths  []string      `json:"additionalReadonlyPaths"`
	AdditionalReadwritePaths []string      `json:"additionalReadwritePaths"`
	NetworkPolicy            networkPolicy `json:"networkPolicy"`
}

type networkPolicy struct {
	Default string `json:"default"`
}

// sandboxPolicy returns spec's sandbox.json.
func sandboxPolicy(spec HomeSpec) sandboxDoc {
	doc := sandboxDoc{Type: "workspace_readonly", ReadBoundary: "workspace", AdditionalReadonlyPaths: []string{},
		AdditionalReadwritePaths: []string{}, NetworkPolicy: networkPolicy{Default: "deny"}}
	if spec.Mode != turn.ModeWrite {
		return doc
	}
	doc.Type = "workspace_readwrite"
	if spec.RuntimeRoot != "" {
		doc.AdditionalReadonlyPaths = append(doc.AdditionalReadonlyPaths, spec.RuntimeRoot)
	}
	if spec.GitCommonDir != "" && spec.GitDir != "" && filepath.Clean(spec.GitCommonDir) != filepath.Clean(spec.GitDir) {
		doc.AdditionalReadonlyPaths = append(doc.AdditionalReadonlyPaths, spec.GitCommonDir)
		doc.AdditionalReadwritePaths = append(doc.AdditionalReadwritePaths, spec.GitDir)
	}
	return doc
}

// ProjectHooks returns one warning text for each hook file of workspace
// (.cursor/hooks.json, .claude/settings.json, .claude/settings.local.json)
// that holds a non-empty "hooks" object: such hooks run outside the
// sandbox. A file that cannot be read (not a regular file, over 1 MiB,
// unreadable) or is not a JSON object gets a warning saying so; a missing
// one none. Reads never block (internal/safefile). It never fails.
func ProjectHooks(workspace string) []string {
	var warnings []string
	for _, rel := range []string{".cursor/hooks.json", ".claude/settings.json", ".claude/settings.local.json"} {
		data, err := safefile.ReadChecked(filepath.Join(workspace, filepath.FromSlash(rel)), homeConfigLimit, nil)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			warnings = append(warnings, "cannot check "+rel+" for project hooks ("+readProblem(err)+"); hooks there would run outside the sandbox")
			continue
		}
		has, err := hasHooks(data)
		switch {
		case err != nil:
			warnings = append(warnings, "cannot check "+rel+" for project hooks (not a JSON object); hooks there would run outside the sandbox")
		case has:
			warnings = append(warnings, "project hooks in "+rel+" run outside the sandbox")
		}
	}
	return warnings
}

// readProblem says why a hook file could not be read, without its path.
func readProblem(err error) string {
	if problem := safefile.Problem(err); problem != "" {
		return "it " + problem
	}
	return "unreadable"
}

// hasHooks reports whether data, a JSON object (a BOM allowed), has a
// "hooks" member that is a non-empty object. Data that is not one JSON
// object is an error.
func hasHooks(data []byte) (bool, error) {
	data = []byte(strings.TrimPrefix(string(data), "\ufeff"))
	var doc map[string]jsontext.Value
	if err := json.Unmarshal(data, &doc); err != nil {
		return false, err
	}
	if doc == nil {
		return false, io.ErrUnexpectedEOF
	}
	raw, ok := doc["hooks"]
	if !ok || raw.Kind() != '{' {
		return false, nil
	}
	var hooks map[string]jsontext.Value
	if err := json.Unmarshal(raw, &hooks); err != nil {
		return false, err
	}
	return len(hooks) > 0, nil
}
