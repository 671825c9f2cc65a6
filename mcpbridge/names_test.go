package mcpbridge

import (
	"encoding/json/jsontext"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestServerOwn(t *testing.T) {
	s := &Server{Tools: []string{"fn_lookup_word", "fn_x"}}
	tests := []struct {
		name, want string
		ok         bool
	}{
		{name: "fn_lookup_word", want: "lookup_word", ok: true},
		{name: "fn_x", want: "x", ok: true},
		{name: "lookup_word"},
		{name: "fn_other"},
		{name: "fn_"},
		{name: ""},
	}
	for _, tt := range tests {
		own, ok := s.Own(tt.name)
		assert.Equal(t, tt.want, own, "%q", tt.name)
		assert.Equal(t, tt.ok, ok, "%q", tt.name)
	}
	own, ok := (*Server)(nil).Own("fn_x")
	assert.False(t, ok, "no bridge publishes nothing")
	assert.Empty(t, own)
	_, ok = (&Server{Tools: []string{"fn_"}}).Own("fn_")
	assert.False(t, ok, "a name that is the prefix alone")
}

func TestResultString(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{in: `"plain text"`, want: `"plain text"`, ok: true},
		{in: `"caf\u00e9 \ud83d\ude00"`, want: `"café 😀"`, ok: true},
		{in: `[{"type":"text","text":"a"},{"type":"image","data":"x"},{"type":"text","text":"b"}]`, want: `"a\nb"`, ok: true},
		{in: `[]`, want: `""`, ok: true},
		{in: `{"content":[{"type":"text","text":"c"}],"structured_content":null}`, want: `"c"`, ok: true},
		{in: `{"content":"c"}`},
		{in: `{"odd":1}`},
		{in: `[1]`},
		{in: `null`},
		{in: `7`},
		{in: ``},
	}
	for _, tt := range tests {
		got, ok := ResultString(jsontext.Value(tt.in))
		assert.Equal(t, tt.want, string(got), "%s", tt.in)
		assert.Equal(t, tt.ok, ok, "%s", tt.in)
	}
}

func TestServerCalled(t *testing.T) {
	s := &Server{Name: "cursorkit0a1b2c3d", Tools: []string{"fn_lookup_word"}}
	tests := []struct {
		name, before, after, own string
		onServer, published      bool
	}{
		{name: "mcp__cursorkit0a1b2c3d__fn_lookup_word", before: "mcp__", after: "__", own: "lookup_word", onServer: true, published: true},
		{name: "mcp_cursorkit0a1b2c3d_fn_lookup_word", before: "mcp_", after: "_", own: "lookup_word", onServer: true, published: true},
		{name: "mcp__cursorkit0a1b2c3d__fn_other", before: "mcp__", after: "__", onServer: true},
		{name: "mcp__cursorkit0a1b2c3d__Bash", before: "mcp__", after: "__", onServer: true},
		{name: "mcp__other__fn_lookup_word", before: "mcp__", after: "__"},
		{name: "mcp_cursorkit0a1b2c3d_fn_lookup_word", before: "mcp__", after: "__"},
		{name: "Read", before: "mcp__", after: "__"},
	}
	for _, tt := range tests {
		own, onServer, published := s.Called(tt.name, tt.before, tt.after)
		assert.Equal(t, tt.own, own, tt.name)
		assert.Equal(t, tt.onServer, onServer, tt.name)
		assert.Equal(t, tt.published, published, tt.name)
	}
	_, onServer, _ := (*Server)(nil).Called("mcp__x__fn_y", "mcp__", "__")
	assert.False(t, onServer, "no bridge has no tools")
}
