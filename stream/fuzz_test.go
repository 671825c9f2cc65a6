package stream

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
)

// seedLines are realistic lines, each also a seed of every line fuzzer.
func seedLines() []string {
	return seq(initLine, userLine, thinkingDelta, thinkingDone,
		snap("m1", "Hello \"world\"\n\u00e9😀"), flushLine("Hello"), deltaLine("Hel"),
		toolPair(`toolu_1\nx`), shellStarted, mcpStarted, unnamedToolCall, resultLine, errorResult("You've hit your usage limit"),
		`{"type":"assistant","message":{"content":[{"type":"text","text":"a\ud83d\ude00\ud800\u00"}]}}`,
		`{"\u0074ype":"assistant","message":{"content":"x"},"message":null}`,
		`{"type":"result","usage":{"inputTokens":1e3}}`, `{"type":"mystery"}`, `[1]`, "Cursor Agent", "",
		"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\"}]}}",
		headLines())
}

// headLines start the way Cursor starts assistant events (assistantHead),
// which Decode reads by a shortcut: verbatim and escaped texts, members
// after the head that repeat or contradict it, and broken ends.
func headLines() []string {
	var lines []string
	for _, rest := range []string{
		`Hello"}]},"session_id":"abc","timestamp_ms":1770823449274}`,
		`Hello"}]},"session_id":"abc","model_call_id":"m1","timestamp_ms":1}`,
		`é😀 "}]}}`, `"}]}}`, `a\"b\n"}]},"session_id":"abc"}`, "a\u0000b\"}]}}",
		`a"}]},"type":"user"}`, `a"}]},"message":{"content":"b"}}`, `a"}]},"message":null}`,
		`a"},{"type":"text","text":"b"}]}}`, `a","x":1}]}}`, `a"}],"role":"x"}}`,
		`a"}]}`, `a"}]},}`, `a"}]} }`, `a"}]}}x`, `a`, "a\x01b\"}]}}", "a\xffb\"}]}}",
	} {
		lines = append(lines, assistantHead+rest)
	}
	return lines
}

// reference decodes an assistant or user line's text the slow, obvious way:
// encoding/json into map[string]any. ok is false when the line's shape is
// not one Decode accepts.
func referenceMessageText(t *testing.T, line []byte) (text string, shapeOK bool) {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&m))
	for _, k := range []string{"session_id", "model_call_id"} {
		if v, ok := m[k]; ok && v != nil {
			if _, isStr := v.(string); !isStr {
				return "", false
			}
		}
	}
	if v, ok := m["timestamp_ms"]; ok && v != nil {
		n, isNum := v.(json.Number)
		if !isNum {
			return "", false
		}
		if _, err := strconv.ParseInt(string(n), 10, 64); err != nil {
			return "", false
		}
	}
	msg, ok := m["message"]
	if !ok || msg == nil {
		return "", true
	}
	mo, ok := msg.(map[string]any)
	if !ok {
		return "", false
	}
	content, ok := mo["content"]
	if !ok || content == nil {
		return "", true
	}
	switch c := content.(type) {
	case string:
		return c, true
	case []any:
		var sb strings.Builder
		for _, el := range c {
			blk, ok := el.(map[string]any)
			if !ok {
				return "", false
			}
			if typ, _ := blk["type"].(string); typ != "text" || blk["text"] == nil {
				continue
			}
			s, ok := blk["text"].(string)
			if !ok {
				return "", false
			}
			sb.WriteString(s)
		}
		return sb.String(), true
	}
	return "", false
}

func isObjectText(b []byte) bool {
	b = trimJSONSpace(b)
	return len(b) > 0 && b[0] == '{'
}

// FuzzDecode holds Decode to encoding/json: it accepts exactly the objects
// json.Valid accepts, its errors are typed, and assistant text equals what a
// map[string]any decode finds.
func FuzzDecode(f *testing.F) {
	for _, l := range seedLines() {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, err := Decode(line)
		valid := json.Valid(line) && isObjectText(line)
		if err != nil {
			require.Nil(t, ev)
			require.Equal(t, failure.Protocol, failure.KindOf(err))
			var de *DecodeError
			require.True(t, errors.As(err, &de))
			require.Equal(t, !valid, de.NotJSON, "NotJSON must mean json.Valid refuses the object: %v", err)
			require.GreaterOrEqual(t, de.Offset, 0)
			require.LessOrEqual(t, de.Offset, len(line))
		} else {
			require.True(t, valid, "Decode accepted what json.Valid refuses")
			require.NotNil(t, ev)
		}
		if !valid {
			return
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal(line, &m))
		typ, _ := m["type"].(string)
		switch typ {
		case TypeAssistant, TypeUser:
			want, shapeOK := referenceMessageText(t, line)
			if !shapeOK {
				require.Error(t, err, "the reference refuses the shape")
				return
			}
			require.NoError(t, err)
			var got string
			if a, ok := ev.(*Assistant); ok {
				got = a.Text
			} else {
				got = ev.(*User).Text
			}
			require.Equal(t, want, got)
		case TypeSystem, TypeThinking, TypeToolCall, TypeResult:
			// Shapes covered by the table tests; here only the typing.
		default:
			require.NoError(t, err)
			u, ok := ev.(*Unknown)
			require.True(t, ok, "type %q", typ)
			require.Equal(t, typ, u.Type)
			require.True(t, json.Valid(u.Raw))
		}
	})
}

// FuzzReaderMatchesEncodingJSON holds the reader's validation to json.Valid
// for any JSON text, not only objects.
func FuzzReaderMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{`0`, `-0.5e+7`, `"a\u00e9"`, `[1,{"a":[true,false,null]}]`, `{"a":1,}`, `[01]`, `1.`, `"\ud800"`, ` {} `, `nul`, "\"\x7f\"", `{"a" 1}`} {
		f.Add([]byte(s))
	}
	for _, l := range seedLines() {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := reader{b: data}
		_, err := r.value()
		if err == nil {
			err = r.end()
		}
		assert.Equal(t, json.Valid(data), err == nil, "reader: %v", err)
	})
}

// FuzzStringLiteral holds the string unescaping to encoding/json's.
func FuzzStringLiteral(f *testing.F) {
	for _, s := range []string{``, `plain`, `a\"b\\c\/\b\f\n\r\t`, `\u00e9\ud83d\ude00`, `\ud800\ud800`, `\udc00`, `\u12`, `\q`, "\xff\xfe", "\xe2\x82\\u00e9", `\ud83d\u0041`, `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		lit := append(append([]byte{'"'}, raw...), '"')
		var want string
		wantErr := json.Unmarshal(lit, &want)
		r := reader{b: lit}
		got, err := r.strValue()
		if wantErr != nil {
			// Either the literal is invalid or it ended early at an inner quote.
			require.True(t, err != nil || r.i != len(lit), "accepted %q", lit)
			return
		}
		require.NoError(t, err)
		require.Equal(t, len(lit), r.i)
		require.Equal(t, want, got)
		require.Equal(t, want, unescape(raw, true))
		require.Equal(t, want, unescape(raw, bytes.IndexByte(raw, '\\') >= 0))
		tr := reader{b: lit, trusted: true}
		s, _, err := tr.str()
		require.NoError(t, err)
		require.Equal(t, span{1, len(lit) - 1}, s)
	})
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b\\\n", "\u2028é\xff", strings.Repeat("abcdefgh", 3) + "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkAppendString(t, s) })
}

// FuzzTurn feeds arbitrary lines to a Turn: it never panics, every failure
// is typed protocol or policy and sticky, every output is valid JSON, the
// text outputs add up to Turn.Text, and the prompt's echo never reaches an
// output or an error. A line "#N" stands for seedLines()[N], so the fuzzer
// can rearrange realistic events as well as mutate them.
func FuzzTurn(f *testing.F) {
	seeds := seedLines()
	f.Add([]byte(strings.Join(seeds, "\n")), byte(0))
	f.Add([]byte("#0\n#1\n#2\n#3\n#4\n#7\n#8\n#5\n#11"), byte(0))
	f.Add([]byte("#18\n#0\n#6\n#6\n#4\n#9\n#10\n#12"), byte(3))
	f.Add([]byte("#0\n#13\n#14\n#15\n#16\n#17\n#19\n#20\n#11\n#11"), byte(1))
	f.Add([]byte(strings.Join(seq("banner", initLine, deltaLine("x"), shellStarted), "\r\n")), byte(1))
	f.Fuzz(func(t *testing.T, data []byte, mode byte) {
		modes := []Mode{ModeDefault, ModePlan, ModeAsk, ModeWrite}
		p, err := NewPolicy(modes[int(mode)%len(modes)], "mcp")
		require.NoError(t, err)
		turn := NewTurn(p)
		turn.KeepText()
		var failed error
		var texts strings.Builder
		for _, line := range bytes.Split(data, []byte("\n")) {
			if len(line) > 1 && line[0] == '#' {
				if n, err := strconv.Atoi(string(line[1:])); err == nil && n >= 0 && n < len(seeds) {
					line = []byte(seeds[n])
				}
			}
			outs, err := turn.Feed(line)
			if failed != nil {
				require.Equal(t, failed, err, "failures are sticky")
				continue
			}
			if err != nil {
				k := failure.KindOf(err)
				require.True(t, k == failure.Protocol || k == failure.Policy, "kind %q: %v", k, err)
				if bytes.Equal(line, []byte(userLine)) || bytes.Contains(line, []byte(`"user"`)) {
					require.NotContains(t, err.Error(), "SECRET", "the prompt's echo in an error")
				}
				failed = err
			}
			for _, o := range outs {
				b := o.AppendJSON(nil)
				require.True(t, json.Valid(b), "%s", b)
				if bytes.Equal(line, []byte(userLine)) {
					require.NotContains(t, string(b), "SECRET", "the prompt's echo in an output")
				}
				if o.Type == OutputText {
					texts.WriteString(o.Text)
				}
			}
		}
		require.Equal(t, texts.String(), turn.Text())
		require.Equal(t, int64(texts.Len()), turn.TextLen())
		for _, exited := range []bool{true, false} {
			end := turn.End(int(mode)%3, exited)
			if end != nil {
				require.True(t, failure.KindOf(end).Valid())
			}
			b, err := json.Marshal(turn.Outcome(end))
			require.NoError(t, err)
			require.True(t, json.Valid(b))
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
		// JSON cannot carry invalid UTF-8, so the agent's words are what
		// encoding/json makes of each segment. Normalise before building the
		// lines: two invalid halves joined raw can form a valid character
		// ("\xc8" + "\x96" is "Ȗ") that the streamed pieces never said.
		for i, s := range segs {
			var back string
			b, _ := json.Marshal(s)
			require.NoError(t, json.Unmarshal(b, &back))
			segs[i] = back
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
		_, turn := texts(t, lines)
		require.Equal(t, strings.Join(segs, ""), turn.Text())
	})
}

func FuzzParseToolList(f *testing.F) {
	for _, s := range []string{"", "mcp,getMcpTools", " a , b ", "a,,b", "rm -rf", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, err := ParseToolList(s)
		if err != nil {
			require.Equal(t, failure.Input, failure.KindOf(err))
			return
		}
		for _, n := range names {
			require.NoError(t, validToolName(n))
		}
		again, err := ParseToolList(strings.Join(names, ","))
		require.NoError(t, err)
		require.Equal(t, names, again)
		_, err = NewPolicy(ModeAsk, names...)
		require.NoError(t, err)
	})
}

func FuzzParseMode(f *testing.F) {
	for _, s := range []string{"", "plan", "ask", "write", "coding", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMode(s)
		if err != nil {
			require.Equal(t, failure.Input, failure.KindOf(err))
			return
		}
		require.True(t, m.Valid())
		_, err = NewPolicy(m)
		require.NoError(t, err)
	})
}

// FuzzArgs checks that no model or session id can smuggle an option or a
// line break into the argv, and that --force comes only with ModeWrite.
func FuzzArgs(f *testing.F) {
	f.Add("gpt-5", "abc", byte(0), false)
	f.Add("--force", "-x", byte(3), true)
	f.Add("auto", "a b", byte(1), false)
	f.Fuzz(func(t *testing.T, model, resume string, mode byte, partial bool) {
		m := []Mode{ModeDefault, ModePlan, ModeAsk, ModeWrite, "bogus"}[int(mode)%5]
		args, err := Args(ArgsOptions{Mode: m, Model: model, Resume: resume, PartialOutput: partial})
		if err != nil {
			require.Equal(t, failure.Input, failure.KindOf(err))
			return
		}
		require.Equal(t, []string{"--print", "--output-format", "stream-json"}, args[:3])
		require.Equal(t, m == ModeWrite, contains(args, "--force"))
		for i, a := range args {
			require.NotContains(t, a, "\n")
			if i > 0 && (args[i-1] == "--model" || args[i-1] == "--resume") {
				require.False(t, strings.HasPrefix(a, "-"))
			}
		}
	})
}

// FuzzScanText holds scanText to the bytewise definition.
func FuzzScanText(f *testing.F) {
	for _, s := range []string{"", "plain text that is long enough for a few words of it", "é", "a\x01b", strings.Repeat("x", 40) + "\x1f", strings.Repeat("y", 64) + "\x80"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var wantCtrl bool
		wantASCII := true
		for _, c := range b {
			wantCtrl = wantCtrl || c < 0x20
			wantASCII = wantASCII && c < 0x80
		}
		ctrl, ascii := scanText(b)
		require.Equal(t, wantCtrl, ctrl, "control character")
		require.Equal(t, wantASCII, ascii, "ASCII")
	})
}
