package turn

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
)

func newStream() *Stream {
	return &Stream{Agent: "tester", Format: "jsonl", First: "an init event", Final: "a done event",
		Classify: func(string) failure.Kind { return failure.Unclassified }}
}

func TestStreamHead(t *testing.T) {
	tests := []struct {
		name         string
		started      bool
		line         string
		typ, subtype string
		banner       bool
		err          string
	}{
		{name: "type and subtype first", started: true, line: `{"type":"system","subtype":"init","x":1}`, typ: "system", subtype: "init"},
		{name: "type alone", started: true, line: `{"type":"item.completed","item":{}}`, typ: "item.completed"},
		{name: "type last", started: true, line: `{"a":[1,{"type":"no"}],"subtype":"s","type":"t"}`, typ: "t", subtype: "s"},
		{name: "escaped names and values", started: true, line: `{"\u0074ype":"us\u0065r"}`, typ: "user"},
		{name: "a type that is no string", started: true, line: `{"type":5,"subtype":"s"}`, subtype: "s"},
		{name: "a subtype that is no string", started: true, line: `{"type":"t","subtype":{}}`, typ: "t"},
		{name: "no type", started: true, line: `{"hello":"world"}`},
		{name: "not JSON before the first event", line: `Update available!`, banner: true},
		{name: "cut JSON before the first event", line: `{"type":"init"`, banner: true},
		{name: "an array before the first event", line: `[1]`, banner: true},
		{name: "not JSON after", started: true, line: `oops {`, err: "line 1, byte offset 0: not a JSON object"},
		{name: "null after", started: true, line: `null`, err: "not a JSON object"},
		{name: "cut JSON after", started: true, line: `{"a":`, err: "byte offset 5: not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStream()
			if tt.started {
				s.started = true
			}
			line, ok, err := s.Next([]byte(tt.line + "\r\n"))
			require.True(t, ok)
			require.NoError(t, err)
			typ, subtype, banner, err := s.Head(line)
			switch {
			case tt.banner:
				require.NoError(t, err)
				require.Len(t, banner, 1)
				assert.Equal(t, event.WarnBanner, banner[0].Warning.Code)
			case tt.err != "":
				require.Error(t, err)
				assert.Equal(t, failure.Protocol, failure.KindOf(err))
				assert.Contains(t, err.Error(), tt.err)
				assert.Equal(t, err, s.Err(), "sticky")
			default:
				require.NoError(t, err)
				assert.Empty(t, banner)
				assert.Equal(t, tt.typ, typ)
				assert.Equal(t, tt.subtype, subtype)
			}
		})
	}
}

func TestStreamPassChecksTheWholeLine(t *testing.T) {
	s := newStream()
	s.started = true
	evs, err := s.Pass("x", "", []byte(`{"type":"x","n":[1,2]}`))
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, event.TypeUnknown, evs[0].Type)
	assert.JSONEq(t, `{"type":"x","n":[1,2]}`, string(evs[0].Unknown.Raw))

	line := []byte(`{"type":"x","n":[1,2}`)
	typ, _, _, err := s.Head(line)
	require.NoError(t, err, "the leading members read")
	assert.Equal(t, "x", typ)
	_, err = s.Pass(typ, "", line)
	require.Error(t, err, "a line passed on whole is one JSON object")
	assert.Contains(t, err.Error(), "byte offset 20: not valid JSON")
}

func TestStreamUnmarshalReasons(t *testing.T) {
	type wire struct {
		Text  string  `json:"text"`
		Count int64   `json:"count"`
		Ratio float64 `json:"ratio"`
		Items []int   `json:"items"`
		Usage *struct {
			In int64 `json:"in"`
		} `json:"usage"`
	}
	tests := []struct{ line, want string }{
		{`{"text":5}`, `byte offset 8: "done" event: field "/text" is a number, not a string`},
		{`{"count":1.5}`, `field "/count" is a number, not an integer in range`},
		{`{"count":1e400}`, `field "/count" is a number, not an integer in range`},
		{`{"ratio":1e400}`, `field "/ratio" is a number out of range`},
		{`{"items":{}}`, `field "/items" is an object, not an array`},
		{`{"usage":{"in":"x"}}`, `field "/usage/in" is a string, not an integer in range`},
		{`{"text":"a","text":7}`, `field "/text" is a number, not a string`},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			s := newStream()
			s.started = true
			line, _, _ := s.Next([]byte(tt.line))
			var w wire
			banner, err := s.Unmarshal(line, &w, "done")
			assert.Empty(t, banner)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	s := newStream()
	line, _, _ := s.Next([]byte(`{"text":"a","text":"b","usage":{"in":1},"usage":{"in":2}}`))
	var w wire
	_, err := s.Unmarshal(line, &w, "")
	require.NoError(t, err)
	assert.Equal(t, "b", w.Text, "a member given twice: the last value")
	assert.Equal(t, int64(2), w.Usage.In)
}

func TestStreamProtocol(t *testing.T) {
	s := newStream()
	s.started = true
	_, ok, err := s.Next([]byte("   \n"))
	assert.False(t, ok)
	require.NoError(t, err)
	assert.Equal(t, 1, s.Line(), "blank lines are counted")

	in := &event.Init{SessionID: "s1"}
	evs := s.Init(in, "init", "", []byte(`{"type":"init"}`))
	require.Len(t, evs, 1)
	assert.Equal(t, event.TypeInit, evs[0].Type)
	evs = s.Init(in, "init", "", []byte(`{"type":"init"}`))
	require.Len(t, evs, 2)
	assert.Equal(t, event.WarnDuplicateInit, evs[0].Warning.Code)
	assert.Equal(t, event.TypeUnknown, evs[1].Type)

	call := &event.Tool{CallID: "c1", Name: "read", Args: []byte(`{"p":1}`)}
	require.NoError(t, s.StartTool(call, nil))
	assert.Equal(t, call, s.Tool("c1"))
	assert.Equal(t, call, s.CompleteTool("c1"))
	assert.Nil(t, s.Tool("c1"), "forgotten once completed")

	res := &event.Result{Text: "ok"}
	s.Finish(res, nil)
	assert.True(t, s.Done())
	_, ok, err = s.Next([]byte(`{"type":"late"}`))
	assert.False(t, ok)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "jsonl protocol violation at line 2, byte offset 0: output after a done event")
	assert.Equal(t, err, s.End(0, ""), "End repeats the stream's failure")
}

func TestStreamPolicyAndEnd(t *testing.T) {
	s := newStream()
	s.started = true
	s.Next([]byte(`{}`))
	refused := failure.New(failure.Policy, "tool %q is not allowed", "shell")
	err := s.StartTool(&event.Tool{CallID: "c9"}, refused)
	require.Error(t, err)
	assert.Equal(t, failure.Policy, failure.KindOf(err))
	assert.Contains(t, err.Error(), `line 1, call id "c9"`)

	u := newStream()
	u.Next([]byte(`{}`))
	err = u.End(0, "")
	assert.Equal(t, failure.Protocol, failure.KindOf(err))
	assert.Contains(t, err.Error(), "tester exited 0 without an init event (1 lines read)")
	err = u.End(3, "boom\n")
	assert.Equal(t, failure.Process, failure.KindOf(err))
	assert.Contains(t, err.Error(), "stderr: boom")

	assert.Contains(t, newStream().NotFirst("hello").Error(), `the first event is of type "hello", not an init event`)
}

// FuzzStreamHead: Head reads the type and subtype of any line an agent
// prints (type and subtype first) as the whole line's decode does, and
// never panics on anything else.
func FuzzStreamHead(f *testing.F) {
	f.Add("system", "init", `"x":1`, []byte(`{"type":"a"}`))
	f.Add("us\u0065r", "", `"m":{"t":[1]}`, []byte(`Update available`))
	f.Add("", "s", ``, []byte(`{"type":5,"subtype":"s"}`))
	f.Fuzz(func(t *testing.T, typ, subtype, rest string, raw []byte) {
		s := newStream()
		s.started = true
		if line, ok, _ := s.Next(raw); ok {
			s.Head(line) // any line: no panic
		}
		typ, subtype = strings.ToValidUTF8(typ, ""), strings.ToValidUTF8(subtype, "")
		tb, _ := json.Marshal(typ)
		sb, _ := json.Marshal(subtype)
		line := `{"type":` + string(tb) + `,"subtype":` + string(sb)
		if rest != "" && jsontext.Value("{"+rest+"}").IsValid() {
			line += "," + rest
		}
		line += "}"
		s = newStream()
		s.started = true
		got, gotSub, banner, err := s.Head([]byte(line))
		require.NoError(t, err, line)
		require.Empty(t, banner)
		assert.Equal(t, typ, got, line)
		assert.Equal(t, subtype, gotSub, line)
	})
}

// TestHeadInternsBounded: Head's types are right past the interned ones.
func TestHeadInternsBounded(t *testing.T) {
	s := Stream{Agent: "a", Format: "f", First: "a first event", Final: "a final event"}
	s.started = true
	for i := range 2 * maxInterned {
		for range 2 {
			n := strconv.Itoa(i)
			typ, subtype, banner, err := s.Head([]byte(`{"type":"t` + n + `","subtype":"s\u00e9` + n + `"}`))
			require.NoError(t, err)
			require.Nil(t, banner)
			require.Equal(t, "t"+n, typ)
			require.Equal(t, "s\u00e9"+n, subtype)
		}
	}
	require.Len(t, s.interned, maxInterned)
}
