package jsonscan

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// options are the decoder options the Scanner matches.
var options = json.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))

// planner decides, for each object or array met, whether a walk descends
// into it (Object/Member, Array/Element) or reads it whole (Value): one
// bit of plan each, in turn; always whole when plan is empty.
type planner struct {
	plan []byte
	n    int
}

func (p *planner) descend() bool {
	if len(p.plan) == 0 {
		return false
	}
	bit := p.plan[(p.n/8)%len(p.plan)]>>(p.n%8)&1 == 1
	p.n++
	return bit
}

// scanWalk reads the next value with s as p plans, appending what it
// read to out.
func scanWalk(s *Scanner, p *planner, out *[]string) bool {
	switch k := s.Peek(); {
	case k == '{' && p.descend():
		if !s.Object() {
			return false
		}
		*out = append(*out, "{")
		for {
			name, ok := s.Member()
			if !ok {
				break
			}
			var buf []byte
			*out = append(*out, "name:"+string(Text(jsontext.Value(`"`+string(name)+`"`), &buf)))
			if !scanWalk(s, p, out) {
				return false
			}
		}
		if s.Failed() {
			return false
		}
		*out = append(*out, "}")
	case k == '[' && p.descend():
		if !s.Array() {
			return false
		}
		*out = append(*out, "[")
		for s.Element() {
			if !scanWalk(s, p, out) {
				return false
			}
		}
		if s.Failed() {
			return false
		}
		*out = append(*out, "]")
	default:
		v := s.Value()
		if v == nil {
			return false
		}
		*out = append(*out, "v:"+string(v))
	}
	return true
}

// decoderWalk is scanWalk with a jsontext.Decoder.
func decoderWalk(d *jsontext.Decoder, p *planner, out *[]string) bool {
	switch k := d.PeekKind(); {
	case k == '{' && p.descend():
		if _, err := d.ReadToken(); err != nil {
			return false
		}
		*out = append(*out, "{")
		for d.PeekKind() == '"' {
			tok, err := d.ReadToken()
			if err != nil {
				return false
			}
			*out = append(*out, "name:"+tok.String())
			if !decoderWalk(d, p, out) {
				return false
			}
		}
		if tok, err := d.ReadToken(); err != nil || tok.Kind() != '}' {
			return false
		}
		*out = append(*out, "}")
	case k == '[' && p.descend():
		if _, err := d.ReadToken(); err != nil {
			return false
		}
		*out = append(*out, "[")
		for d.PeekKind() != ']' {
			if !decoderWalk(d, p, out) {
				return false
			}
		}
		if _, err := d.ReadToken(); err != nil {
			return false
		}
		*out = append(*out, "]")
	default:
		v, err := d.ReadValue()
		if err != nil {
			return false
		}
		*out = append(*out, "v:"+string(v))
	}
	return true
}

// scan walks text with a Scanner as plan plans: what it read, and whether
// it accepted the text.
func scan(text, plan []byte) ([]string, bool) {
	var s Scanner
	s.Reset(text)
	var out []string
	ok := scanWalk(&s, &planner{plan: plan}, &out) && s.End()
	return out, ok
}

func TestScannerAccepts(t *testing.T) {
	tests := []struct {
		name, text string
		whole      bool // declined when descended into
	}{
		{"object", `{"type":"x","n":1}`, false},
		{"spaces everywhere", " \t{ \"a\" :\r\n [ 1 , -2.5e+3 , true , false , null , \"s\" , { } , [ ] ] } \n", false},
		{"empty object", `{}`, false},
		{"empty array", `[]`, false},
		{"scalar", `"just a string"`, false},
		{"number", `-0.0E-0`, false},
		{"escapes in values", `{"a":"\"\\\/\b\f\n\r\t\u00e9\uD83D\uDE00"}`, false},
		{"lone surrogate escape", `{"a":"\ud800"}`, false},
		{"invalid UTF-8", "{\"a\":\"\xff\xfe\"}", false},
		{"escaped name in a value read whole", `{"a":{"\u0062":1}}`, true},
		{"a name given twice", `{"a":1,"a":2}`, false},
		{"nested", `{"a":[{"b":[[],[{}]]},{"c":{"d":"e"}}]}`, false},
		{"DEL and non-ASCII", "{\"a\":\"\x7f\u00e9\u4e16\"}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.True(t, jsontext.Value(tt.text).IsValid(options), "the test's text must be valid")
			for _, plan := range [][]byte{nil, {0xff}, {0x55}} {
				if tt.whole && plan != nil {
					continue
				}
				got, ok := scan([]byte(tt.text), plan)
				require.True(t, ok, "plan %x", plan)
				var want []string
				d := jsontext.NewDecoder(strings.NewReader(tt.text), options)
				require.True(t, decoderWalk(d, &planner{plan: plan}, &want))
				assert.Equal(t, want, got, "plan %x", plan)
			}
		})
	}
}

func TestScannerRefuses(t *testing.T) {
	tests := []struct {
		name, text string
		valid      bool // valid JSON that the Scanner declines when it descends
	}{
		{"empty", ``, false},
		{"whitespace", "  \n", false},
		{"trailing comma in object", `{"a":1,}`, false},
		{"trailing comma in array", `[1,]`, false},
		{"leading comma", `[,1]`, false},
		{"missing comma", `{"a":1 "b":2}`, false},
		{"missing colon", `{"a" 1}`, false},
		{"name not a string", `{a:1}`, false},
		{"unclosed object", `{"a":1`, false},
		{"unclosed array", `[1,2`, false},
		{"unclosed string", `{"a":"x}`, false},
		{"wrong closer", `{"a":[1}`, false},
		{"two values", `{} {}`, false},
		{"garbage after", `{"a":1}x`, false},
		{"control byte in string", "{\"a\":\"x\ny\"}", false},
		{"bad escape", `{"a":"\x"}`, false},
		{"short unicode escape", `{"a":"\u12"}`, false},
		{"non-hex unicode escape", `{"a":"\u12g4"}`, false},
		{"leading zero", `{"a":01}`, false},
		{"plus sign", `{"a":+1}`, false},
		{"bare fraction", `{"a":.5}`, false},
		{"empty fraction", `{"a":1.}`, false},
		{"empty exponent", `{"a":1e}`, false},
		{"bare minus", `{"a":-}`, false},
		{"truncated literal", `{"a":tru}`, false},
		{"longer literal", `{"a":nulll}`, false},
		{"capital literal", `{"a":True}`, false},
		{"NaN", `{"a":NaN}`, false},
		{"single quotes", `{'a':1}`, false},
		{"BOM", "\ufeff{}", false},
		{"comment", `{"a":1 /* no */}`, false},
		{"escaped name", `{"\u0061":1}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.valid, jsontext.Value(tt.text).IsValid(options), "the test's text validity")
			for _, plan := range [][]byte{nil, {0xff}} {
				if tt.valid && plan == nil {
					continue // read whole, an escaped name is accepted
				}
				_, ok := scan([]byte(tt.text), plan)
				assert.False(t, ok, "plan %x", plan)
			}
		})
	}
}

func TestScannerDepth(t *testing.T) {
	for _, depth := range []int{1, 100, maxDepth - 1, maxDepth, maxDepth + 1} {
		text := strings.Repeat("[", depth) + strings.Repeat("]", depth)
		_, ok := scan([]byte(text), nil)
		assert.Equal(t, jsontext.Value(text).IsValid(options), ok, "depth %d", depth)
	}
}

func TestScannerFailedStaysFailed(t *testing.T) {
	var s Scanner
	s.Reset([]byte(`{"a":x,"b":1}`))
	require.True(t, s.Object())
	name, ok := s.Member()
	require.True(t, ok)
	assert.Equal(t, "a", string(name))
	assert.Nil(t, s.Value())
	assert.True(t, s.Failed())
	_, ok = s.Member()
	assert.False(t, ok)
	assert.Equal(t, jsontext.Kind(0), s.Peek())
	assert.False(t, s.End())

	// Reset clears it.
	s.Reset([]byte(`[1]`))
	assert.False(t, s.Failed())
	assert.Equal(t, "[1]", string(s.Value()))
	assert.True(t, s.End())
}

func TestScannerMisuse(t *testing.T) {
	var s Scanner
	s.Reset([]byte(`[1]`))
	_, ok := s.Member() // no object begun
	assert.False(t, ok)
	assert.True(t, s.Failed())

	s.Reset([]byte(`{"a":1}`))
	require.True(t, s.Object())
	assert.False(t, s.Element()) // an object, not an array
	assert.True(t, s.Failed())

	s.Reset([]byte(`{"a":1}`))
	require.True(t, s.Object())
	_, ok = s.Member()
	require.True(t, ok)
	require.NotNil(t, s.Value())
	assert.False(t, s.End()) // the object has not ended
}

func TestCompact(t *testing.T) {
	tests := []struct {
		v    string
		want bool
	}{
		{`{"a":[1,"x y",{"b":null}]}`, true},
		{`"spaces inside a string"`, true},
		{`{"\u0061":1}`, true},
		{`{"a": 1}`, false},
		{` {"a":1}`, false},
		{`{"a":1}` + "\n", false},
		{"[1,\t2]", false},
		{`{"a":1`, false},
		{`{"a":1}{}`, false},
		{``, false},
	}
	var s Scanner
	for _, tt := range tests {
		assert.Equal(t, tt.want, s.Compact([]byte(tt.v), 0), "%q", tt.v)
	}
	// The depth the value is written at counts toward the limit.
	deep := []byte(strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1))
	assert.True(t, s.Compact(deep, 1))
	assert.False(t, s.Compact(deep, 2))
	deepest := []byte(strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth))
	assert.True(t, s.Compact(deepest, 0))
	assert.False(t, s.Compact(deepest, 1))
}

// TestScannerOrder: reads out of order fail the Scanner, so it never
// accepts a text jsontext refuses, however it is called.
func TestScannerOrder(t *testing.T) {
	tests := []struct {
		name, text string
		calls      func(s *Scanner)
	}{
		{"a member without its value", `{"a":}`, func(s *Scanner) { s.Object(); s.Member(); s.Member() }},
		{"a member's value skipped", `{"a":,"b":1}`, func(s *Scanner) { s.Object(); s.Member(); s.Member(); s.Value(); s.Member() }},
		{"an element without Element", `[1 2]`, func(s *Scanner) { s.Array(); s.Value(); s.Value(); s.Element() }},
		{"a value without Member", `{1}`, func(s *Scanner) { s.Object(); s.Value(); s.Member() }},
		{"an element without its value", `[,]`, func(s *Scanner) { s.Array(); s.Element(); s.Element(); s.Element() }},
		{"two values", `1 2`, func(s *Scanner) { s.Value(); s.Value() }},
		{"nothing read", ``, func(s *Scanner) {}},
		{"an object in an object without Member", `{{}}`, func(s *Scanner) { s.Object(); s.Object(); s.Member(); s.Member() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.False(t, jsontext.Value(tt.text).IsValid(options))
			var s Scanner
			s.Reset([]byte(tt.text))
			tt.calls(&s)
			assert.False(t, s.End())
		})
	}
	// In order, the same calls read valid texts.
	var s Scanner
	s.Reset([]byte(`{"a":1,"b":[2,{}]}`))
	require.True(t, s.Object())
	_, ok := s.Member()
	require.True(t, ok)
	require.Equal(t, "1", string(s.Value()))
	_, ok = s.Member()
	require.True(t, ok)
	require.True(t, s.Array())
	require.True(t, s.Element())
	require.Equal(t, "2", string(s.Value()))
	require.True(t, s.Element())
	require.True(t, s.Object())
	_, ok = s.Member()
	require.False(t, ok)
	require.False(t, s.Element())
	_, ok = s.Member()
	require.False(t, ok)
	require.True(t, s.End())
}

func TestText(t *testing.T) {
	tests := []string{
		`""`, `"plain"`, `"a\"b"`, `"\u00e9\n"`, `"\ud800x"`, "\"\xff\"", `"\uD83D\uDE00"`, "\"\u00e9\"",
	}
	for _, v := range tests {
		var want string
		require.NoError(t, json.Unmarshal([]byte(v), &want, options), v)
		var buf []byte
		assert.Equal(t, want, string(Text(jsontext.Value(v), &buf)), v)
	}
	plain := jsontext.Value(`"plain"`)
	var buf []byte
	got := Text(plain, &buf)
	assert.Equal(t, &plain[1], &got[0], "a plain string is a view")
}

func TestParseInt64(t *testing.T) {
	for _, v := range []string{"0", "-0", "1", "-1", "9223372036854775807", "-9223372036854775808",
		"9223372036854775808", "-9223372036854775809", "1.0", "1e2", "01", "", "-", "12345678901234567890"} {
		var want int64
		err := json.Unmarshal([]byte(v), &want, options)
		got, ok := ParseInt64([]byte(v))
		assert.Equal(t, err == nil, ok, v)
		if ok {
			assert.Equal(t, want, got, v)
		}
	}
}

func FuzzScanner(f *testing.F) {
	for _, s := range []string{`{"type":"x","a":[1,{"b":null}]}`, `[true,false,"\u00e9"]`, `{"\u0061":1}`, `-1.5e3`,
		"{\"a\":\"\xff\"}", `{"a":1,}`, `{"a":{"b":[[[]]]}}`} {
		f.Add([]byte(s), []byte{0x00})
		f.Add([]byte(s), []byte{0xff, 0x0f})
	}
	f.Fuzz(func(t *testing.T, text, plan []byte) {
		got, ok := scan(text, plan)
		valid := jsontext.Value(text).IsValid(options)
		if ok {
			require.True(t, valid, "the Scanner accepted what jsontext refuses: %q", text)
			var want []string
			d := jsontext.NewDecoder(bytes.NewReader(text), options)
			require.True(t, decoderWalk(d, &planner{plan: plan}, &want))
			require.Equal(t, want, got)
			for _, v := range got {
				v, ok := strings.CutPrefix(v, "v:")
				if !ok {
					continue
				}
				switch jsontext.Value(v).Kind() {
				case '"':
					var want string
					require.NoError(t, json.Unmarshal([]byte(v), &want, options))
					var buf []byte
					require.Equal(t, want, string(Text(jsontext.Value(v), &buf)))
				case '0':
					var want int64
					err := json.Unmarshal([]byte(v), &want, options)
					n, ok := ParseInt64([]byte(v))
					require.Equal(t, err == nil, ok, v)
					if ok {
						require.Equal(t, want, n)
					}
				}
			}
			var c Scanner
			compacted := bytes.Clone(text)
			require.NoError(t, (*jsontext.Value)(&compacted).Compact())
			require.Equal(t, bytes.Equal(compacted, text), c.Compact(text, 0), "Compact(%q)", text)
		} else if valid && !bytes.Contains(text, []byte(`\`)) {
			t.Fatalf("the Scanner declined valid JSON without an escape: %q (plan %x)", text, plan)
		}
		// Any calls in any order: what ends accepted is valid.
		var r Scanner
		r.Reset(text)
		for _, c := range plan {
			switch c % 6 {
			case 0:
				r.Object()
			case 1:
				r.Array()
			case 2:
				r.Member()
			case 3:
				r.Element()
			case 4:
				r.Value()
			case 5:
				r.Peek()
			}
		}
		if r.End() {
			require.True(t, valid, "calls %x accepted %q", plan, text)
		}
	})
}

// BenchmarkScanner reads lines of the agents' recorded streams whole, as
// the decoders' first ways do.
func BenchmarkScanner(b *testing.B) {
	var lines [][]byte
	for _, name := range []string{"../../claude/testdata/good-turn.jsonl", "../../codex/testdata/success.jsonl", "../../gemini/testdata/turn-tools.jsonl"} {
		data, err := os.ReadFile(name)
		require.NoError(b, err)
		lines = append(lines, bytes.Split(bytes.TrimSpace(data), []byte("\n"))...)
	}
	var size int
	for _, l := range lines {
		size += len(l)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var s Scanner
	for b.Loop() {
		for _, l := range lines {
			s.Reset(l)
			if s.Value() == nil || !s.End() {
				b.Fatalf("not read: %s", l)
			}
		}
	}
}
