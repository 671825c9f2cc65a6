package cursor

import (
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/childenv"
	"github.com/cursorkit/cursorkit/internal/safefile"
	"github.com/cursorkit/cursorkit/turn"
)

// EnvAPIKey is the credential the Cursor CLI reads from its environment.
// A sandboxed turn passes it through unchanged; nothing ever reads or
// copies a credential file.
const EnvAPIKey = "CURSOR_API_KEY"

// CheckCredentials fails a sandboxed turn that cannot authenticate, before
// anything is made: on Linux the Cursor CLI in a private home sees no
// login, only EnvAPIKey in env (failure.Auth when it is missing or blank).
// macOS reaches the keychain through the home's link; Windows is not
// checked (docs/contract.md, "The task profile").
func CheckCredentials(env []string) error {
	return checkCredentials(env, runtime.GOOS)
}

func checkCredentials(env []string, goos string) error {
	if goos != "linux" {
		return nil
	}
	if strings.TrimSpace(childenv.Lookup(env, EnvAPIKey, goos)) == "" {
		return failure.New(failure.Auth, "%s is not set: a sandboxed task runs the Cursor CLI in a private home, where its login is not visible; create an API key in the Cursor dashboard and export %s", EnvAPIKey, EnvAPIKey)
	}
	return nil
}

// PrivateEnv is env for an agent whose home is home: HOME (and on Windows
// USERPROFILE, where the CLI reads its configuration) set to home, and the
// variables that would lead the CLI to the user's own configuration
// removed: CURSOR_CONFIG_DIR and the XDG configuration, data and state
// directories (which then follow HOME). Everything else, EnvAPIKey
// included, passes unchanged.
func PrivateEnv(env []string, home string) []string {
	return privateEnv(env, home, runtime.GOOS)
}

func privateEnv(env []string, home, goos string) []string {
	replaced := []string{"HOME", "USERPROFILE", "CURSOR_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"}
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if slices.ContainsFunc(replaced, func(name string) bool { return envKeyEqual(k, name, goos) }) {
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "HOME="+home)
	if goos == "windows" {
		out = append(out, "USERPROFILE="+home)
	}
	return out
}

// KeychainDir is the user's keychain directory on macOS (HOME in env +
// Library/Keychains), which a private home links to; "" without HOME.
func KeychainDir(env []string) string {
	if h := childenv.Lookup(env, "HOME", runtime.GOOS); h != "" {
		return filepath.Join(h, "Library", "Keychains")
	}
	return ""
}

// Billing pools: the subscription pool a quota failure exhausts.
const (
	PoolFirstParty = "first-party" // Cursor's own composer models
	PoolAPI        = "api"         // every other model
)

// BillingPool is the pool model draws on: PoolFirstParty for composer-*
// ids (and a display name starting with "Composer"), PoolAPI for every
// other model, "" when model is empty (unknown).
func BillingPool(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	switch {
	case m == "":
		return ""
	case strings.HasPrefix(m, "composer"):
		return PoolFirstParty
	}
	return PoolAPI
}

// RuntimeRoot is the installation root of the language runtime that a
// sandboxed write turn exposes read-only (HomeSpec.RuntimeRoot): that of
// Node.js, the Cursor CLI's own runtime and that of the npm tooling most
// workspaces build with, found on env's PATH by discovery's rules and
// followed through its links. On POSIX it is the directory above the one
// holding node (/usr/local for /usr/local/bin/node); on Windows, where
// node.exe sits in the installation's root, that directory. "" when there
// is no node on PATH: nothing more is exposed then.
func RuntimeRoot(ctx context.Context, env discovery.Env) string {
	res, err := discovery.Resolve(ctx, discovery.Candidate{Value: "node", Source: discovery.SourcePath}, env, discovery.OSFS())
	if err != nil {
		return ""
	}
	exe := res.Path
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	dir := filepath.Dir(exe)
	if env.GOOS == "windows" {
		return dir
	}
	return filepath.Dir(dir)
}

// CheckWorkspaceSandbox refuses a workspace whose own .cursor/sandbox.json
// could widen a sandboxed turn's policy: Cursor merges it over the
// private home's with priority (docs/contract.md, "The task profile"), so
// a task never runs with one that is not at least as strict. Allowed: no
// file; or a JSON object whose "type" is workspace_readonly (or, for
// turn.ModeWrite, workspace_readwrite), whose networkPolicy, if any, is only
// {"default":"deny"}, with disableTmpWrite as it likes and nothing else.
// Anything else, and a file that cannot be read (bounded, non-blocking,
// regular files only) or parsed, is failure.Sandbox naming the member and
// the fix; the file's content is never quoted.
func CheckWorkspaceSandbox(workspace string, mode turn.Mode) error {
	data, err := safefile.Read(filepath.Join(workspace, ".cursor", "sandbox.json"), homeConfigLimit)
	var reason string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		reason = "cannot be read (" + readProblem(err) + ")"
	default:
		reason = widens(data, mode)
	}
	if reason == "" {
		return nil
	}
	return failure.New(failure.Sandbox, "the workspace's .cursor/sandbox.json %s: Cursor gives it priority over the task's sandbox policy, so the task does not run; remove the file or make it no wider than the task's policy", reason)
}

// widens says how a workspace sandbox.json could widen mode's policy, ""
// when it cannot.
func widens(data []byte, mode turn.Mode) string {
	var doc map[string]jsontext.Value
	if err := json.Unmarshal(data, &doc); err != nil {
		return "is not one JSON object"
	}
	allowedTypes := []string{"workspace_readonly"}
	if mode == turn.ModeWrite {
		allowedTypes = append(allowedTypes, "workspace_readwrite")
	}
	names := make([]string, 0, len(doc))
	for name := range doc {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		v := doc[name]
		switch name {
		case "type":
			var t string
			if json.Unmarshal(v, &t) != nil || !slices.Contains(allowedTypes, t) {
				return "sets \"type\" to a policy wider than " + allowedTypes[len(allowedTypes)-1]
			}
		case "disableTmpWrite":
			var b bool
			if json.Unmarshal(v, &b) != nil {
				return "has a \"disableTmpWrite\" that is not a boolean"
			}
		case "networkPolicy":
			var np map[string]jsontext.Value
			if json.Unmarshal(v, &np) != nil {
				return "has a \"networkPolicy\" that is not an object"
			}
			for k, pv := range np {
				var d string
				if k != "default" || json.Unmarshal(pv, &d) != nil || d != "deny" {
					return "has a \"networkPolicy\" that allows network access (only {\"default\": \"deny\"} is accepted)"
				}
			}
		default:
			return "sets " + turn.Quote(name, 40) + ", which can widen what the agent may read, write or reach"
		}
	}
	return ""
}

func envKeyEqual(a, b, goos string) bool {
	if goos == "windows" {
		return strings.EqualFold(a, b)
	}
	return a == b
}
