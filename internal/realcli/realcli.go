// Package realcli runs the real agent CLIs in tests: it finds the builds
// scripts/real-clis pinned, gives each run a home, configuration and
// credentials of its own (never the user's) pointed at a model-API
// stand-in (package modelapi) on the loopback, and holds the scenarios
// every real-CLI test plays and what each must show (Scenarios, Check).
// Only _test.go files import it.
package realcli

import (
	"encoding/json/v2"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The CLIs, by cursorkit's agent name.
const (
	Claude = "claude"
	Codex  = "codex"
	Gemini = "gemini"
)

// CLIs are the real CLIs, in a stable order.
func CLIs() []string { return []string{Claude, Codex, Gemini} }

// Root returns the nearest directory above the working directory (a
// package's, in a test) that holds go.mod.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, parent, dir, "no go.mod above the working directory")
		dir = parent
	}
}

// installDir is where scripts/real-clis installed this OS's builds:
// $CURSORKIT_REAL_CLIS (_WIN32 on Windows), else .cache/realclis/linux
// (win32) under the root.
func installDir(t testing.TB) string {
	t.Helper()
	env, sub := "CURSORKIT_REAL_CLIS", "linux"
	if runtime.GOOS == "windows" {
		env, sub = "CURSORKIT_REAL_CLIS_WIN32", "win32"
	}
	dir := os.Getenv(env)
	if dir == "" {
		dir = filepath.Join(Root(t), ".cache", "realclis", sub)
	}
	abs, err := filepath.Abs(dir)
	require.NoError(t, err)
	return abs
}

// Bin returns the installed CLI as npm put it on PATH (node_modules/.bin).
// On Windows it is Claude Code's claude.cmd (npm's shim, which starts the
// native claude.exe) and Codex's native codex.exe (npm's codex.cmd needs
// node.exe, which the Windows lane lacks, as Gemini CLI's JavaScript does:
// its tests skip). A missing CLI skips the test, or fails it under CI,
// which installs every CLI.
func Bin(t testing.TB, cli string) string {
	t.Helper()
	bin := filepath.Join(installDir(t), "node_modules", ".bin", cli)
	if runtime.GOOS == "windows" {
		switch cli {
		case Gemini:
			t.Skip("the Windows lane has no node.exe to run Gemini CLI's JavaScript")
		case Codex:
			bin = filepath.Join(installDir(t), "node_modules", "@openai", "codex-win32-x64", "vendor", "x86_64-pc-windows-msvc", "bin", "codex.exe")
		default:
			bin += ".cmd"
		}
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the real %s is not installed at %s (CI installs it with scripts/real-clis): %v", cli, bin, err)
		}
		t.Skipf("the real %s is not installed at %s: run scripts/real-clis", cli, bin)
	}
	return bin
}

// Version returns the installed CLI's npm package version, "" without it.
func Version(t testing.TB, cli string) string {
	t.Helper()
	npm := map[string]string{Claude: "@anthropic-ai/claude-code", Codex: "@openai/codex", Gemini: "@google/gemini-cli"}[cli]
	b, err := os.ReadFile(filepath.Join(installDir(t), "node_modules", filepath.FromSlash(npm), "package.json"))
	if err != nil {
		return ""
	}
	var pkg struct {
		Version string `json:"version"`
	}
	require.NoError(t, json.Unmarshal(b, &pkg))
	return pkg.Version
}

// APIKey is the credential every CLI is given for the stand-in: not a
// secret, and no real API would take it.
const APIKey = "sk-cursorkit-standin-0000"

// Env returns the whole environment of one run of cli: the few system
// variables a program needs (systemEnv), and home (HOME, XDG_*, TMPDIR;
// USERPROFILE, APPDATA, LOCALAPPDATA, TEMP, TMP on Windows) holding the
// CLI's configuration for the model API at api (modelapi.Server.URL) and
// its credential. With api "" the CLI has neither, as where nobody logged
// in. No credential or configuration of the user's reaches the CLI.
func Env(t testing.TB, cli, api, home string) []string {
	t.Helper()
	env := systemEnv()
	tmp := filepath.Join(home, "tmp")
	require.NoError(t, os.MkdirAll(tmp, 0o700))
	if runtime.GOOS == "windows" {
		env = append(env, "USERPROFILE="+home, "HOME="+home, "APPDATA="+filepath.Join(home, "AppData", "Roaming"),
			"LOCALAPPDATA="+filepath.Join(home, "AppData", "Local"), "TEMP="+tmp, "TMP="+tmp)
	} else {
		env = append(env, "HOME="+home, "TMPDIR="+tmp, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
			"XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
			"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"))
	}
	switch cli {
	case Claude:
		// Claude Code's documented switches off traffic beside the turn
		// (auto-update, telemetry, error reports); one retry, so a failing
		// API fails the turn in about a second.
		env = append(env, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
			"CLAUDE_CODE_MAX_RETRIES=1")
		if api != "" {
			env = append(env, "ANTHROPIC_BASE_URL="+api, "ANTHROPIC_API_KEY="+APIKey)
		}
	case Codex:
		codexHome := filepath.Join(home, ".codex")
		require.NoError(t, os.MkdirAll(codexHome, 0o700))
		env = append(env, "CODEX_HOME="+codexHome)
		if api != "" {
			require.NoError(t, os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(codexConfig(api)), 0o600))
			env = append(env, "OPENAI_API_KEY="+APIKey)
		}
	case Gemini:
		dir := filepath.Join(home, ".gemini")
		require.NoError(t, os.MkdirAll(dir, 0o700))
		settings := map[string]any{
			"privacy": map[string]any{"usageStatisticsEnabled": false},
			// One retry: a failing API fails the turn after Gemini CLI's
			// first backoff (5 s) instead of ten.
			"general": map[string]any{"maxAttempts": 2},
		}
		if api != "" {
			settings["security"] = map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}}
			env = append(env, "GOOGLE_GEMINI_BASE_URL="+api, "GEMINI_API_KEY="+APIKey)
		}
		b, err := json.Marshal(settings)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o600))
		// Gemini CLI refuses a folder the user has not trusted; a test's
		// workspace is trusted by this, not by a file in the home.
		env = append(env, "GEMINI_CLI_TRUST_WORKSPACE=true")
	}
	return env
}

// codexConfig is Codex's config.toml for the Responses API at api: a
// provider of its own (no WebSocket, no login), one retry of a request and
// of a stream, and no plugin sync or analytics export (Codex's only other
// traffic).
func codexConfig(api string) string {
	return fmt.Sprintf(`model_provider = "standin"
check_for_update_on_startup = false

[features]
plugins = false

[analytics]
enabled = false

[model_providers.standin]
name = "cursorkit stand-in"
base_url = %q
wire_api = "responses"
env_key = "OPENAI_API_KEY"
request_max_retries = 1
stream_max_retries = 1
`, api+"/v1")
}

// systemEnv is what a program needs of this process's environment: PATH
// (to find node) and, on Windows, the system's own variables.
func systemEnv() []string {
	keep := []string{"PATH", "LANG"}
	if runtime.GOOS == "windows" {
		keep = []string{"PATH", "PATHEXT", "SystemRoot", "SystemDrive", "windir", "ComSpec", "OS",
			"NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE", "ProgramData", "ProgramFiles", "WINEPREFIX", "WINEDEBUG"}
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		for _, k := range keep {
			if strings.EqualFold(name, k) {
				env = append(env, kv)
			}
		}
	}
	return env
}

// Workspace makes dir, a new empty directory, a git repository holding the
// files the scenarios read and edit (FileA, FileB), and returns it.
func Workspace(t testing.TB, dir string) string {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte(FileA), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "b.txt"), []byte(FileB), 0o644))
	git, err := exec.LookPath("git")
	if err != nil {
		// No git (the Windows lane): git init's three entries.
		for _, d := range []string{"objects", filepath.Join("refs", "heads")} {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, ".git", d), 0o755))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
		return dir
	}
	cmd := exec.Command(git, "init", "-q", dir)
	cmd.Env = append(systemEnv(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git init: %s", out)
	return dir
}

// The files of a Workspace: a.txt and sub/b.txt.
const (
	FileA = "alpha line one\nalpha line two\n"
	FileB = "beta\n"
)
