package gemini

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/safefile"
	"github.com/cursorkit/cursorkit/mcpbridge"
	"github.com/cursorkit/cursorkit/turn"
)

// EnvHome names the variable that moves Gemini CLI's home: its
// homedir() returns it instead of the OS's, so ~/.gemini is
// $GEMINI_CLI_HOME/.gemini (docs/notes/mcp-bridge.md, section 3).
const EnvHome = "GEMINI_CLI_HOME"

// checkBridge refuses a bridge a turn cannot publish to Gemini CLI: in
// plan mode Gemini offers no MCP tool at all (its trusted-server rule is
// for the other modes only), so a plan turn with a bridge is a
// failure.Input error rather than a turn whose tools silently vanish; so
// is a bridge whose server name Gemini could not split back out of
// mcp_SERVER_TOOL (it splits at the first '_').
func checkBridge(t Turn) error {
	if t.Bridge == nil {
		return nil
	}
	if mode, _ := t.Mode.Resolve(); mode == turn.ModePlan {
		return failure.New(failure.Input, "gemini's plan mode cannot call MCP tools: a turn with the MCP tool bridge runs in ask or write mode")
	}
	if t.Bridge.Name == "" || strings.ContainsFunc(t.Bridge.Name, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-')
	}) {
		return failure.New(failure.Input, "the MCP bridge's server name %s is not letters, digits and '-'", turn.Quote(t.Bridge.Name, 64))
	}
	if t.Bridge.Command == "" || t.Bridge.Dir == "" || !filepath.IsAbs(t.Bridge.Dir) {
		return failure.New(failure.Input, "the MCP bridge names no command or no absolute directory")
	}
	// Gemini replaces $NAME and ${NAME} in every string of its settings
	// with the variable's value, and has no escape for a '$': a value that
	// holds one could start another program or read another file.
	values := append([]string{t.Bridge.Command}, t.Bridge.Args...)
	for _, v := range t.Bridge.Env {
		values = append(values, v)
	}
	for _, v := range values {
		if expands(v) {
			return failure.New(failure.Input, "the MCP bridge's command, arguments or environment hold %s, which gemini would expand as a variable", turn.Quote(v, 120))
		}
	}
	return nil
}

// expands reports whether gemini's settings would expand part of s: a '$'
// followed by a letter, digit, '_' or '{' (resolveEnvVarsInString).
func expands(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if c := s[i+1]; s[i] == '$' && (c == '{' || c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return true
		}
	}
	return false
}

// bridged is mcpbridge.Server.Called for the names Gemini CLI gives the
// bridge's tools.
func bridged(b *mcpbridge.Server, name string) (own string, onServer, published bool) {
	return b.Called(name, mcpPrefix, "_")
}

// bridgedError is the result of a bridged call that failed: the tool's
// own text when gemini reports the tool's error (type mcp_tool_error,
// whose message is "MCP tool 'T' reported tool error for function call:
// CALL with response: PARTS", PARTS the MCP result as JSON, in
// DiscoveredMCPToolInvocation.execute), else the error's message, a JSON
// string; the error object as gemini wrote it when it has neither.
func bridgedError(obj jsontext.Value) jsontext.Value {
	var e struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	if json.Unmarshal(obj, &e) != nil || e.Message == "" {
		return obj
	}
	text := e.Message
	if e.Type == "mcp_tool_error" {
		// The call's arguments come first and may hold the marker: the
		// first marker whose rest is whole JSON of the parts is the one.
		const marker = " with response: "
		for i := strings.Index(e.Message, marker); i >= 0; {
			var parts []struct {
				FunctionResponse struct {
					Response jsontext.Value `json:"response"`
				} `json:"functionResponse"`
			}
			if json.Unmarshal([]byte(e.Message[i+len(marker):]), &parts) == nil && len(parts) == 1 {
				if q, ok := mcpbridge.ResultString(parts[0].FunctionResponse.Response); ok {
					return q
				}
			}
			next := strings.Index(e.Message[i+1:], marker)
			if next < 0 {
				break
			}
			i += 1 + next
		}
	}
	q, err := jsontext.AppendQuote(nil, text)
	if err != nil {
		return obj
	}
	return q
}

// maxSettings bounds the user's settings.json that BridgeHome reads.
const maxSettings = 1 << 20

// homeEntries are what BridgeHome links from the user's ~/.gemini into
// the turn's home, when present, so that Gemini CLI there is the user's in
// all but its settings file. Gemini keeps them beside settings.json
// (Storage in packages/core/src/config/storage.ts):
//
//   - the credentials and the account: oauth_creds.json (a Google login),
//     gemini-credentials.json (the file fallback of its keychain),
//     google_accounts.json, installation_id, mcp-oauth-tokens.json and
//     a2a-oauth-tokens.json (the tokens of the user's own MCP servers and
//     agents);
//   - what decides what it may do: trustedFolders.json, policies/,
//     mcp-server-enablement.json, extension-enablement.json;
//   - what it knows: GEMINI.md (the global memory), extensions/,
//     commands/, skills/, agents/, acknowledgments/;
//   - its sessions, so that a turn resumes a session of the user's and
//     a later turn this one: tmp/ (chats by project), projects.json
//     (which tmp/ folder is which project), history/.
//
// settings.json is the turn's own (BridgeHome); anything else Gemini
// writes (state.json, a new installation_id) stays in the turn's home and
// goes with it: so does the session of a turn whose user has no
// ~/.gemini/tmp yet, which a later turn then cannot resume. A file Gemini
// replaces instead of writing through the link (projects.json: a new file
// renamed over it) is the turn's from then on; Gemini finds a project's
// tmp/ folder by the marker file in it anyway.
func homeEntries() []string {
	return []string{
		"oauth_creds.json", "gemini-credentials.json", "google_accounts.json", "installation_id",
		"mcp-oauth-tokens.json", "a2a-oauth-tokens.json",
		"trustedFolders.json", "policies", "mcp-server-enablement.json", "extension-enablement.json",
		"GEMINI.md", "extensions", "commands", "skills", "agents", "acknowledgments",
		"tmp", "projects.json", "history",
	}
}

// maxCopied bounds a file BridgeHome copies where it cannot link.
const maxCopied = 1 << 20

// BridgeHome makes the private Gemini CLI home of a turn that publishes
// the bridge t.Bridge, in the bridge's own directory (so it goes when the
// bridge is closed), and returns the variables to add to the turn's
// environment: GEMINI_CLI_HOME, naming it. getenv reads the turn's
// environment.
//
// Nothing is written into the user's workspace or home. The turn's home
// holds .gemini/settings.json, the user's own settings (GEMINI_CLI_HOME's,
// else HOME's or, on Windows, USERPROFILE's .gemini/settings.json, read
// whole up to 1 MiB, comments allowed as Gemini allows them) with
// mcpServers.SERVER set to the bridge's {command, args, env, trust:true}
// (trust: its tools run without a confirmation, which a headless turn
// cannot give) and the server added to mcp.allowed and taken out of
// mcp.excluded when the user's settings list them. Beside it, links to
// homeEntries of the user's ~/.gemini (copies of the regular files up to
// 1 MiB where the OS refuses a link, as Windows without the privilege
// does; a directory is then left out), and to ~/.agents, Gemini's other
// home folder.
//
// A bridge checkBridge refuses is a failure.Input error; a user's
// settings file that cannot be read, is too large or is not a JSON
// object, failure.Setup; a home that cannot be made, failure.Resource.
// No error quotes the settings.
func BridgeHome(t Turn, getenv func(string) string) ([]string, error) {
	if err := checkBridge(t); err != nil {
		return nil, err
	}
	b := t.Bridge
	user := userHome(getenv)
	home := filepath.Join(b.Dir, "gemini-home")
	dir := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, failure.Wrap(failure.Resource, err, "cannot make gemini's home for the MCP bridge")
	}
	var settings []byte
	if user != "" {
		var err error
		if settings, err = readSettings(filepath.Join(user, ".gemini", "settings.json")); err != nil {
			return nil, err
		}
	}
	merged, err := bridgeSettings(settings, b)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), merged, 0o600); err != nil {
		return nil, failure.Wrap(failure.Resource, err, "cannot write gemini's settings for the MCP bridge")
	}
	if user != "" {
		for _, name := range homeEntries() {
			if err := link(filepath.Join(user, ".gemini", name), filepath.Join(dir, name)); err != nil {
				return nil, err
			}
		}
		if err := link(filepath.Join(user, ".agents"), filepath.Join(home, ".agents")); err != nil {
			return nil, err
		}
	}
	return []string{EnvHome + "=" + home}, nil
}

// userHome is the home Gemini CLI would use for the turn's environment,
// "" when it names none.
func userHome(getenv func(string) string) string {
	if h := getenv(EnvHome); h != "" {
		return h
	}
	if runtime.GOOS == "windows" {
		if h := getenv("USERPROFILE"); h != "" {
			return h
		}
	}
	return getenv("HOME")
}

// readSettings reads the user's settings file: nil when there is none; a
// regular file (a link to one is followed, as Gemini follows it) of at
// most maxSettings bytes.
func readSettings(path string) ([]byte, error) {
	data, err := safefile.Read(path, maxSettings)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, failure.New(failure.Setup, "cannot read gemini's settings file %s: it %s", turn.Quote(path, 200), safefile.Problem(err))
	}
	return data, nil
}

// bridgeSettings returns user, the user's settings file (nil: none), with
// the bridge's server in it (BridgeHome says how). Every other member is
// kept as it was, comments aside.
func bridgeSettings(user []byte, b *mcpbridge.Server) ([]byte, error) {
	settings := map[string]jsontext.Value{}
	if len(bytes.TrimSpace(user)) > 0 {
		if err := json.Unmarshal(stripComments(user), &settings); err != nil {
			return nil, failure.New(failure.Setup, "gemini's settings file is not a JSON object (%s)", jsonProblem(err))
		}
	}
	entry := map[string]any{"command": b.Command, "args": slices.Clip(b.Args), "env": b.Env, "trust": true}
	if entry["args"] == nil {
		entry["args"] = []string{}
	}
	if err := setMember(settings, "mcpServers", b.Name, entry); err != nil {
		return nil, err
	}
	if err := allowServer(settings, b.Name); err != nil {
		return nil, err
	}
	out, err := json.Marshal(settings, json.Deterministic(true), jsontext.WithIndent("  "))
	if err != nil {
		return nil, failure.Wrap(failure.Setup, err, "cannot write gemini's settings")
	}
	return append(out, '\n'), nil
}

// setMember sets settings[object][name] to v, making the object when
// absent; an object member that is not an object is failure.Setup.
func setMember(settings map[string]jsontext.Value, object, name string, v any) error {
	members := map[string]jsontext.Value{}
	if raw, ok := settings[object]; ok && raw.Kind() != 'n' {
		if err := json.Unmarshal(raw, &members); err != nil {
			return failure.New(failure.Setup, "gemini's settings member %s is not an object", object)
		}
	}
	value, err := json.Marshal(v)
	if err != nil {
		return failure.Wrap(failure.Setup, err, "cannot write gemini's settings")
	}
	members[name] = value
	raw, err := json.Marshal(members, json.Deterministic(true))
	if err != nil {
		return failure.Wrap(failure.Setup, err, "cannot write gemini's settings")
	}
	settings[object] = raw
	return nil
}

// allowServer adds server to mcp.allowed when the user's settings list
// the allowed servers (Gemini starts no other then) and takes it out of
// mcp.excluded.
func allowServer(settings map[string]jsontext.Value, server string) error {
	raw, ok := settings["mcp"]
	if !ok || raw.Kind() == 'n' {
		return nil
	}
	var mcp map[string]jsontext.Value
	if err := json.Unmarshal(raw, &mcp); err != nil {
		return failure.New(failure.Setup, "gemini's settings member mcp is not an object")
	}
	for _, key := range []string{"allowed", "excluded"} {
		list, ok := mcp[key]
		if !ok || list.Kind() == 'n' {
			continue
		}
		var names []string
		if err := json.Unmarshal(list, &names); err != nil {
			return failure.New(failure.Setup, "gemini's settings member mcp.%s is not a list of names", key)
		}
		names = slices.DeleteFunc(names, func(n string) bool { return n == server })
		if key == "allowed" {
			names = append(names, server)
		}
		var err error
		if mcp[key], err = json.Marshal(names); err != nil {
			return failure.Wrap(failure.Setup, err, "cannot write gemini's settings")
		}
	}
	out, err := json.Marshal(mcp, json.Deterministic(true))
	if err != nil {
		return failure.Wrap(failure.Setup, err, "cannot write gemini's settings")
	}
	settings["mcp"] = out
	return nil
}

// jsonProblem says where JSON failed to parse, never what it held.
func jsonProblem(err error) string {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		return "a syntax error at byte offset " + strconv.FormatInt(se.ByteOffset, 10)
	}
	var sem *json.SemanticError
	if errors.As(err, &sem) {
		return "a value of the wrong kind"
	}
	return "unreadable"
}

// stripComments returns JSON with comments, as Gemini CLI reads its
// settings (strip-json-comments), as plain JSON: every // line comment
// and /* block comment */ outside a string becomes spaces, so offsets
// stay where they were.
func stripComments(in []byte) []byte {
	out := bytes.Clone(in)
	inString := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			out[i], out[i+1] = ' ', ' '
			for i += 2; i < len(out); i++ {
				if out[i] == '*' && i+1 < len(out) && out[i+1] == '/' {
					out[i], out[i+1] = ' ', ' '
					i++
					break
				}
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
		}
	}
	return out
}

// link makes to a symbolic link to from when from exists; where the OS
// refuses the link, or makes one that does not lead to from, a regular
// file of at most maxCopied bytes is copied (mode 0600) and anything else
// left out.
func link(from, to string) error {
	if _, err := os.Stat(from); err != nil {
		return nil // absent (or unreadable): Gemini does without it
	}
	if _, err := os.Lstat(to); err == nil {
		// Made for an earlier turn with this bridge: never written again,
		// for a write through a link would rewrite the user's own file.
		return nil
	}
	if os.Symlink(from, to) == nil {
		if _, err := os.Stat(to); err == nil {
			return nil
		}
		// A link made but not followed (Wine makes one whose target is a
		// Windows path its own file system cannot resolve): copy instead.
		os.Remove(to)
	}
	data, err := safefile.Read(from, maxCopied)
	if err != nil {
		return nil // not a regular file, or too large: left out
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		return failure.Wrap(failure.Resource, err, "cannot copy %s into gemini's home for the MCP bridge", filepath.Base(from))
	}
	return nil
}
