package agents

import (
	"bytes"
	"encoding/json/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/turn"
)

// cursorTemplate is a Cursor CLI turn: init, the prompt's echo, thinking,
// a tool call, text, the result.
var cursorTemplate = []string{
	`{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/repo","session_id":"abc","model":"Claude 4.5 Sonnet","permissionMode":"default"}`,
	`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"hello"}]},"session_id":"abc"}`,
	`{"type":"thinking","subtype":"delta","text":"hm","session_id":"abc"}`,
	`{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"lsToolCall":{"args":{"path":"."}}},"session_id":"abc"}`,
	`{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"lsToolCall":{"args":{"path":"."},"result":{"success":{}}}},"session_id":"abc"}`,
	`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Hello"}]},"session_id":"abc"}`,
	`{"type":"result","subtype":"success","is_error":false,"duration_ms":1234,"duration_api_ms":1200,"result":"Hello","session_id":"abc","request_id":"r1"}`,
}

// templates are each agent's turn: Cursor's above, and the real CLIs'
// recorded edit turns (testdata/real).
func templates(t testing.TB) map[string][]string {
	out := map[string][]string{"cursor": cursorTemplate}
	for _, cli := range []string{"claude", "codex", "gemini"} {
		paths, err := filepath.Glob(filepath.Join("..", "testdata", "real", cli, "*", "edit.ndjson"))
		require.NoError(t, err)
		require.NotEmpty(t, paths, "a recorded %s turn", cli)
		data, err := os.ReadFile(paths[len(paths)-1])
		require.NoError(t, err)
		out[cli] = strings.Split(strings.TrimSpace(string(data)), "\n")
	}
	return out
}

// spell writes s as the contents of a JSON string, one of five ways:
// escaped as encoding/json does, every rune a \u escape (surrogate pairs
// beyond the BMP), in mixed case, escaped twice (a JSON text inside a
// JSON string), or mixed case and all \u escapes.
func spell(s string, how uint8) string {
	inner := func(v string) string { b, _ := json.Marshal(v); return string(b[1 : len(b)-1]) }
	switch how % 5 {
	case 0:
		return inner(s)
	case 1:
		return testkit.EscapeAll(s)
	case 2:
		return inner(mixedCase(s))
	case 3:
		return inner(`"` + inner(s) + `"`)
	}
	return testkit.EscapeAll(mixedCase(s))
}

func mixedCase(s string) string {
	rs := []rune(s)
	for i := range rs {
		if i%2 == 0 {
			rs[i] = unicode.ToUpper(rs[i])
		} else {
			rs[i] = unicode.ToLower(rs[i])
		}
	}
	return string(rs)
}

// plant puts the prompt, spelled, into line i of lines one of nine ways,
// and returns the stdout and stderr of the turn.
func plant(lines []string, i int, where uint8, spelled string) (stdout, stderr string) {
	lines = append([]string(nil), lines...)
	quoted := `"` + spelled + `"`
	line := lines[i]
	switch where % 9 {
	case 0: // the event's type
		lines[i] = regexp.MustCompile(`"type":"[^"]*"`).ReplaceAllLiteralString(line, `"type":`+quoted)
	case 1: // a member of its own, first
		lines[i] = `{"prompt":` + quoted + `,` + strings.TrimPrefix(line, "{")
	case 2: // a bare JSON string for a line
		lines[i] = quoted
	case 3: // a line cut after the prompt
		lines[i] = `{"type":` + quoted
	case 4: // raw text after the object
		lines[i] = line + " " + spelled
	case 5: // an echo of the prompt before the line
		lines = append(lines[:i], append([]string{`{"type":"us\u0065r","message":{"role":"user","content":` + quoted + `}}`}, lines[i:]...)...)
	case 6: // every string of the line
		lines[i] = everyString(line, quoted)
	case 7: // stderr, the stream cut before the line
		return strings.Join(lines[:i], "\n") + "\n", "Error: bad request: " + spelled + "\n"
	case 8: // a member of the wrong kind holding it, last
		lines[i] = strings.TrimSuffix(line, "}") + `,"message":` + quoted + `,"usage":` + quoted + `}`
	}
	return strings.Join(lines, "\n") + "\n", ""
}

// everyString replaces every string of the JSON line, names excepted,
// with quoted.
func everyString(line, quoted string) string {
	var v any
	if json.Unmarshal([]byte(line), &v) != nil {
		return line
	}
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case string:
			return "\x00P\x00"
		case []any:
			for i := range v {
				v[i] = walk(v[i])
			}
		case map[string]any:
			for k := range v {
				v[k] = walk(v[k])
			}
		}
		return v
	}
	b, err := json.Marshal(walk(v), json.Deterministic(true))
	if err != nil {
		return line
	}
	return strings.ReplaceAll(string(b), `"\u0000P\u0000"`, quoted)
}

var (
	uEscape = regexp.MustCompile(`\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}`)
	xEscape = regexp.MustCompile(`\\x[0-9a-fA-F]{2}`)
)

// plain undoes every escape of s, three times over, and keeps its letters
// and digits, lower case: an independent reading of "holds the prompt".
func plain(s string) string {
	for range 3 {
		s = uEscape.ReplaceAllStringFunc(s, func(e string) string {
			hi, _ := strconv.ParseUint(e[2:6], 16, 32)
			if len(e) == 12 {
				lo, _ := strconv.ParseUint(e[8:12], 16, 32)
				return string(utf16.DecodeRune(rune(hi), rune(lo)))
			}
			return string(rune(hi))
		})
		s = xEscape.ReplaceAllStringFunc(s, func(e string) string {
			b, _ := strconv.ParseUint(e[2:], 16, 8)
			return string([]byte{byte(b)})
		})
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, s)
}

// said is every text of a turn that may never hold the prompt: errors,
// warnings, unknown events, ids and models, an error result's text, the
// stderr tail. The model's words, thinking and tool calls are the turn.
func said(o turn.Outcome, err error, evs []event.Event) []string {
	out := []string{o.Message, o.SessionID, o.Model, o.Process.StderrTail}
	if err != nil {
		out = append(out, err.Error())
	}
	for _, w := range o.Warnings {
		out = append(out, w.Message)
	}
	for _, e := range evs {
		switch {
		case e.Warning != nil:
			out = append(out, e.Warning.Code, e.Warning.Message)
		case e.Unknown != nil:
			out = append(out, e.Unknown.Type, e.Unknown.Subtype, string(e.Unknown.Raw))
		case e.Init != nil:
			out = append(out, e.Init.SessionID, e.Init.Model, e.Init.CWD, e.Init.PermissionMode, e.Init.APIKeySource)
		case e.Result != nil:
			out = append(out, e.Result.SessionID, e.Result.Model, e.Result.RequestID)
			if e.Result.IsError {
				out = append(out, e.Result.Text)
			}
		}
		if b, err := json.Marshal(e); err == nil && e.Type != event.TypeText && e.Type != event.TypeThinking &&
			e.Tool == nil && (e.Result == nil || e.Result.IsError) {
			out = append(out, string(b))
		}
	}
	return out
}

// FuzzPromptNeverLeaks plants the prompt in every agent's lines, spelled
// every way JSON allows, at every line and position, and replays the turn
// as Run decodes it: no error, excerpt, warning, id or unknown event
// holds it.
func FuzzPromptNeverLeaks(f *testing.F) {
	tpl := templates(f)
	for where := range uint8(9) {
		for spelling := range uint8(5) {
			f.Add("Refactor the payment module", uint8(where+spelling), uint16(where), where, spelling, int8(1))
		}
	}
	f.Add("ünïcödé 🚀 prompt", uint8(0), uint16(1), uint8(6), uint8(1), int8(0))
	names := []string{"cursor", "claude", "codex", "gemini"}
	byName := map[string]Agent{}
	for _, a := range All() {
		byName[a.Name] = a
	}
	f.Fuzz(func(t *testing.T, core string, which uint8, at uint16, where, spelling uint8, exitCode int8) {
		name := names[int(which)%len(names)]
		lines := tpl[name]
		prompt := "Qz7 " + strings.ToValidUTF8(core, "") + " Xk9"
		stdout, stderr := plant(lines, int(at)%len(lines), where, spell(prompt, spelling))
		dec, err := byName[name].decoder(Turn{Prompt: prompt, Mode: turn.ModeWrite})
		require.NoError(t, err)
		var evs []event.Event
		o, err := turn.Replay(dec, prompt, []byte(stdout), []byte(stderr), int(exitCode), turn.Options{
			OnEvent: func(e event.Event) { evs = append(evs, e) }})
		secret := plain(prompt)
		for _, s := range said(o, err, evs) {
			if strings.Contains(plain(s), secret) {
				t.Fatalf("%s: the prompt %q leaked into %q\nstdout:\n%s\nstderr: %s", name, prompt, s, stdout, stderr)
			}
		}
	})
}

// TestReplayMatchesTheRecordedTurns holds Replay to what the real CLIs'
// recorded turns decode to: each edit turn succeeds with its text.
func TestReplayMatchesTheRecordedTurns(t *testing.T) {
	for name, lines := range templates(t) {
		t.Run(name, func(t *testing.T) {
			a := map[string]Agent{}
			for _, x := range All() {
				a[x.Name] = x
			}
			dec, err := a[name].decoder(Turn{Prompt: "hello", Mode: turn.ModeWrite})
			require.NoError(t, err)
			var evs []event.Event
			o, err := turn.Replay(dec, "hello", []byte(strings.Join(lines, "\n")), nil, 0, turn.Options{
				OnEvent: func(e event.Event) { evs = append(evs, e) }})
			require.NoError(t, err)
			require.Equal(t, turn.StatusDone, o.Status)
			var text bytes.Buffer
			for _, e := range evs {
				if e.Type == event.TypeText {
					text.WriteString(e.Text)
				}
			}
			require.NotEmpty(t, text.String(), "the answer")
		})
	}
}
