package cursor

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/turn"
)

// seedLines are realistic lines and their near misses, each also a seed of
// every line fuzzer.
func seedLines() []string {
	return seq(initLine, userLine, thinkingDelta, thinkingDone,
		snap("m1", "Hello \"world\"\n\u00e9😀"), flushLine("Hello"), deltaLine("Hel"),
		toolPair(`toolu_1\nx`), shellStarted, mcpStarted, unnamedToolCall, resultLine, errorResult("You've hit your usage limit"),
		`{"type":"assistant","message":{"content":[{"type":"text","text":"a\ud83d\ude00\ud800\u00"}]}}`,
		`{"\u0074ype":"assistant","message":{"content":"x"},"message":null}`,
		`{"type":"result","usage":{"inputTokens":1e3}}`, `{"type":"mystery"}`, `[1]`, "Cursor Agent", "",
		"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\"}]}}",
		variants(),
		// Where json/v2 reads null as a zero value and the protocol wants
		// an object, or the other way round.
		`null`, `{"type":"assistant","message":{"content":[null,{"type":"text","text":"a"}]}}`,
		`{"type":"tool_call","subtype":"started","tool_call":null}`, `{"type":"tool_call","tool_call":{"readToolCall":null}}`,
		`{"type":"result","usage":null,"duration_ms":null,"is_error":null}`, `{"type":"user","message":null}`,
		// Cursor's MCP tool call (TestDecoderMCPServers) and near misses.
		mcpStartedOf("github"), mcpCompletedOnly, mcpStartedOf("cursorkit-tools-1"),
		`{"type":"tool_call","subtype":"started","call_id":"toolu_m","tool_call":{"mcpToolCall":{"args":{"providerIdentifier":7}}}}`)
}

// assistantHead is how Cursor starts an assistant event with one text
// block, up to the text's opening quote.
const assistantHead = `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"`

// variants are lines shaped like Cursor's assistant events with the end
// changed: members that repeat or contradict the head, escaped texts,
// broken ends.
func variants() []string {
	var lines []string
	for _, rest := range []string{
		`Hello"}]},"session_id":"abc","timestamp_ms":1770823449274}`,
		`Hello"}]},"session_id":"abc","model_call_id":"m1","timestamp_ms":1}`,
		`é😀 "}]}}`, `"}]}}`, `a\"b\n"}]},"session_id":"abc"}`, "a\u0000b\"}]}}",
		`a"}]},"type":"user"}`, `a"}]},"message":{"content":"b"}}`, `a"}]},"message":null}`,
		`a"},{"type":"text","text":"b"}]}}`, `a","x":1}]}}`, `a"}],"role":"x"}}`,
		`a"}]}`, `a"}]},}`, `a"}]} }`, `a"}]}}x`, `a`, "a\x01b\"}]}}", "a\xffb\"}]}}",
		`a"}]},"cwd":1,"usage":[],"tool_call":"x"}`, `a"}]},"timestamp_ms":"1"}`,
	} {
		lines = append(lines, assistantHead+rest)
	}
	return lines
}

// FuzzFeed feeds arbitrary lines to a Decoder: it never panics, every
// failure is a *failure.Error of kind protocol or policy and sticky, Done
// holds exactly once a result event was returned, every event marshals to
// one valid JSON line, the text events add up to what the decoder says
// was said, and the prompt's echo never reaches an event. A line "#N"
// stands for seedLines()[N], so the fuzzer can rearrange realistic events
// as well as mutate them.
func FuzzFeed(f *testing.F) {
	seeds := seedLines()
	f.Add([]byte(strings.Join(seeds, "\n")), byte(0))
	f.Add([]byte("#0\n#1\n#2\n#3\n#4\n#7\n#8\n#5\n#11"), byte(0))
	f.Add([]byte("#18\n#0\n#6\n#6\n#4\n#9\n#10\n#12"), byte(3))
	f.Add([]byte("#0\n#13\n#14\n#15\n#16\n#17\n#19\n#20\n#11\n#11"), byte(1))
	f.Add([]byte(strings.Join(seq("banner", initLine, deltaLine("x"), shellStarted), "\r\n")), byte(1))
	f.Add([]byte(strings.Join(seq(initLine, userLine, mcpStartedOf("cursorkit-tools-1"), mcpCompletedOnly, resultLine), "\n")), byte(4+3))
	f.Add([]byte(strings.Join(seq(initLine, mcpCompletedOnly, resultLine), "\n")), byte(4))
	f.Add([]byte(strings.Join(seq(initLine, mcpStartedOf("github"), resultLine), "\n")), byte(4+1))
	f.Fuzz(func(t *testing.T, data []byte, mode byte) {
		modes := []turn.Mode{"", turn.ModePlan, turn.ModeAsk, turn.ModeWrite}
		req := Turn{Mode: modes[int(mode)%len(modes)], Tools: []string{"mcp"}}
		if mode&4 != 0 { // only the MCP tools of one server
			req.Tools, req.MCPServers = nil, []string{"cursorkit-tools-1"}
		}
		d := newDecoder(t, req)
		d.keepText()
		var failed error
		var done bool
		var texts strings.Builder
		var out bytes.Buffer
		enc := event.NewEncoder(&out)
		for _, line := range bytes.Split(data, []byte("\n")) {
			if len(line) > 1 && line[0] == '#' {
				if n, err := strconv.Atoi(string(line[1:])); err == nil && n >= 0 && n < len(seeds) {
					line = []byte(seeds[n])
				}
			}
			evs, err := d.Feed(line)
			if failed != nil {
				require.Equal(t, failed, err, "failures are sticky")
				require.Empty(t, evs)
				continue
			}
			if err != nil {
				var fe *failure.Error
				require.ErrorAs(t, err, &fe)
				require.True(t, fe.Kind == failure.Protocol || fe.Kind == failure.Policy, "kind %q: %v", fe.Kind, err)
				failed = err
			}
			for _, ev := range evs {
				done = done || ev.Type == event.TypeResult
				out.Reset()
				require.NoError(t, ev.MarshalJSONTo(enc))
				b := out.Bytes()
				require.True(t, jsontext.Value(b).IsValid(turn.UnmarshalOptions()), "%s", b)
				require.Equal(t, 1, bytes.Count(b, []byte("\n")), "one line: %s", b)
				if bytes.Equal(line, []byte(userLine)) {
					require.NotContains(t, string(b), "SECRET", "the prompt's echo in an event")
				}
				if ev.Type == event.TypeText {
					texts.WriteString(ev.Text)
				}
			}
			require.Equal(t, done, d.Done(), "Done exactly after the result")
		}
		require.Equal(t, texts.String(), d.saidText())
		require.Equal(t, texts.Len(), d.saidLen())
		if end := d.End(int(mode)%3, string(data)); end != nil {
			require.True(t, failure.KindOf(end).Valid())
		}
	})
}

// FuzzDedupe builds a turn from fuzzed segments, sends it the way Cursor
// does (with or without --stream-partial-output, with or without recaps and
// a final copy) and checks that the agent's words come out exactly once.
func FuzzDedupe(f *testing.F) {
	f.Add([]byte("Checking.\x00Checking.\x00Done."), byte(0), byte(0))
	f.Add([]byte("ha\x00ha"), byte(1), byte(7))
	f.Add([]byte("Let me look.\x00Found it."), byte(5), byte(2))
	f.Add([]byte("a\x00ab\x00b"), byte(2), byte(3))
	f.Fuzz(func(t *testing.T, data []byte, shape, splits byte) {
		var segs []string
		for _, s := range strings.Split(string(data), "\x00") {
			if s != "" {
				segs = append(segs, s)
			}
		}
		if len(segs) == 0 {
			return
		}
		// JSON cannot carry invalid UTF-8, so the agent's words are what a
		// JSON round trip makes of each segment. Normalise before building
		// the lines: two invalid halves joined raw can form a valid
		// character ("\xc8" + "\x96" is "Ȗ") that the streamed pieces
		// never said.
		for i, s := range segs {
			segs[i] = string([]rune(s))
		}
		partial := shape&1 != 0
		recaps := shape&2 != 0 || !partial // without partial output the snapshot is the text
		final := int(shape>>2) % 3         // 0: none, 1: the last segment again, 2: the whole turn again
		var lines []string
		for i, s := range segs {
			call := "m" + strconv.Itoa(i)
			if partial {
				// Cut s into deltas every few bytes, on rune boundaries (a
				// JSON string holds whole characters).
				step := int(splits)%7 + 1
				for start := 0; start < len(s); {
					end := min(len(s), start+step)
					for end < len(s) && !utf8.RuneStart(s[end]) {
						end++
					}
					lines = append(lines, deltaLine(s[start:end]))
					start = end
				}
			}
			if recaps {
				lines = append(lines, snap(call, s))
			}
			lines = append(lines, toolPair("t"+strconv.Itoa(i))...)
		}
		switch final {
		case 1:
			lines = append(lines, flushLine(segs[len(segs)-1]))
		case 2:
			lines = append(lines, flushLine(strings.Join(segs, "")))
		}
		_, d := texts(t, lines)
		require.Equal(t, strings.Join(segs, ""), d.saidText())
	})
}

// FuzzTools checks that a Turn's tool names are either refused as input
// or allowed, exactly, by the decoder.
func FuzzTools(f *testing.F) {
	for _, s := range []string{"", "mcp,getMcpTools", "a,,b", "rm -rf", "é", "web_fetch,semantic-search"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names := strings.Split(s, ",")
		d, err := NewDecoder(Turn{Mode: turn.ModeAsk, Tools: names})
		if err != nil {
			require.Equal(t, failure.Input, failure.KindOf(err))
			return
		}
		for _, n := range names {
			require.NoError(t, turn.CheckName("tool name", n, 64, "_-"))
			require.Nil(t, d.(*decoder).allow.check(n, nil))
		}
		_, err = Args(Turn{Tools: names})
		require.NoError(t, err)
	})
}

// FuzzMCPServer checks the MCP server policy against a map reading of the
// args: an MCP call is allowed exactly when its args are an object whose
// last providerIdentifier is a string, the one server key of the turn.
func FuzzMCPServer(f *testing.F) {
	f.Add("github", `{"name":"github-x","providerIdentifier":"github","toolName":"x"}`)
	f.Add("github", `{"providerIdentifier":"github","providerIdentifier":"gitlab"}`)
	f.Add("cursorkit-tools-1", `{"providerIdentifier":"cursorkit-tools-1\u0000"}`)
	f.Add("a", `{"providerIdentifier":"\u0061"}`)
	f.Add("a", `{"providerIdentifier":{"x":"a"}}`)
	f.Add("a.b", `{"providerIdentifier":"a.b"}`)
	f.Add("a", `["a"]`)
	f.Add("a", `{"providerIdentifier":{"x":1},"providerIdentifier":"a"}`)
	f.Fuzz(func(t *testing.T, key, args string) {
		d, err := NewDecoder(Turn{MCPServers: []string{key}})
		if err != nil {
			require.Equal(t, failure.Input, failure.KindOf(err))
			require.Error(t, turn.CheckName("MCP server key", key, 128, "_-"))
			return
		}
		require.NoError(t, turn.CheckName("MCP server key", key, 128, "_-"))
		if !jsontext.Value([]byte(args)).IsValid(turn.UnmarshalOptions()) || bytes.ContainsAny([]byte(args), "\r\n") {
			return
		}
		var m map[string]jsontext.Value
		var server string
		want := json.Unmarshal([]byte(args), &m, turn.UnmarshalOptions()) == nil && m["providerIdentifier"].Kind() == '"' &&
			json.Unmarshal(m["providerIdentifier"], &server, turn.UnmarshalOptions()) == nil && server == key
		_, err = d.Feed([]byte(initLine))
		require.NoError(t, err)
		_, err = d.Feed([]byte(`{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"mcpToolCall":{"args":` + args + `}}}`))
		if want {
			require.NoError(t, err)
		} else {
			require.Error(t, err)
			require.Equal(t, failure.Policy, failure.KindOf(err))
		}
	})
}

func FuzzParseMode(f *testing.F) {
	for _, s := range []string{"", "plan", "ask", "write", "coding", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := turn.ParseMode(s)
		if err != nil {
			require.Equal(t, failure.Input, failure.KindOf(err))
			return
		}
		_, err = NewDecoder(Turn{Mode: m})
		require.NoError(t, err)
		_, err = Args(Turn{Mode: m})
		require.NoError(t, err)
	})
}

// FuzzArgs checks that no model or session id can smuggle an option or a
// line break into the argv, and that --force comes only with turn.ModeWrite.
func FuzzArgs(f *testing.F) {
	f.Add("gpt-5", "abc", byte(0), false)
	f.Add("--force", "-x", byte(3), true)
	f.Add("auto", "a b", byte(1), false)
	f.Fuzz(func(t *testing.T, model, resume string, mode byte, partial bool) {
		m := []turn.Mode{"", turn.ModePlan, turn.ModeAsk, turn.ModeWrite, "bogus"}[int(mode)%5]
		args, err := Args(Turn{Mode: m, Model: model, Resume: resume, PartialOutput: partial})
		if err != nil {
			require.Equal(t, failure.Input, failure.KindOf(err))
			return
		}
		require.Equal(t, []string{"--print", "--output-format", "stream-json"}, args[:3])
		require.Equal(t, m == turn.ModeWrite, slices.Contains(args, "--force"))
		for i, a := range args {
			require.NotContains(t, a, "\n")
			if i > 0 && (args[i-1] == "--model" || args[i-1] == "--resume") {
				require.False(t, strings.HasPrefix(a, "-"))
			}
		}
	})
}
