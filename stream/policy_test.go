package stream

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
)

func TestPolicyAllowlists(t *testing.T) {
	readOnlyTools := []string{"glob", "grep", "ls", "read"}
	writeTools := []string{"delete", "edit", "glob", "grep", "ls", "read", "readTodos", "shell", "updateTodos", "write"}
	tests := []struct {
		mode  Mode
		extra []string
		want  []string
	}{
		{ModeDefault, nil, readOnlyTools},
		{ModePlan, nil, readOnlyTools},
		{ModeAsk, nil, readOnlyTools},
		{ModeWrite, nil, writeTools},
		{ModeAsk, []string{"mcp", "getMcpTools", "read"}, []string{"getMcpTools", "glob", "grep", "ls", "mcp", "read"}},
	}
	for _, tt := range tests {
		t.Run(tt.mode.String(), func(t *testing.T) {
			p, err := NewPolicy(tt.mode, tt.extra...)
			require.NoError(t, err)
			assert.Equal(t, tt.want, p.Tools())
			assert.Equal(t, tt.mode, p.Mode())
			for _, name := range tt.want {
				assert.True(t, p.Allows(name), name)
				assert.NoError(t, p.Check(name))
			}
			for _, name := range []string{"mcp", "getMcpTools", "webFetch", "Read", "READ", "", "semSearch"} {
				if !contains(tt.want, name) {
					assert.False(t, p.Allows(name), name)
					assert.Equal(t, failure.Policy, failure.KindOf(p.Check(name)), name)
				}
			}
		})
	}
	assert.True(t, ModePlan.ReadOnly())
	assert.True(t, ModeDefault.ReadOnly())
	assert.False(t, ModeWrite.ReadOnly())
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestZeroPolicyAllowsNothing(t *testing.T) {
	var p Policy
	assert.False(t, p.Allows("read"))
	assert.Equal(t, failure.Policy, failure.KindOf(p.Check("read")))
}

func TestNewPolicyRefuses(t *testing.T) {
	_, err := NewPolicy(Mode("yolo"))
	assert.Equal(t, failure.Input, failure.KindOf(err))
	_, err = NewPolicy(ModeWrite, "mcp", "bad name")
	assert.Equal(t, failure.Input, failure.KindOf(err))
	assert.Contains(t, err.Error(), `' ' at byte 3`)
}

func TestParseMode(t *testing.T) {
	tests := []struct {
		in   string
		want Mode
		ok   bool
	}{
		{"", ModeDefault, true},
		{"plan", ModePlan, true},
		{"ask", ModeAsk, true},
		{"write", ModeWrite, true},
		{"coding", ModeWrite, true},
		{"Plan", "", false},
		{"agent", "", false},
	}
	for _, tt := range tests {
		got, err := ParseMode(tt.in)
		if tt.ok {
			require.NoError(t, err, tt.in)
			assert.Equal(t, tt.want, got)
			assert.True(t, got.Valid())
		} else {
			assert.Equal(t, failure.Input, failure.KindOf(err), tt.in)
		}
	}
	assert.Equal(t, "default", ModeDefault.String())
	assert.Equal(t, "write", ModeWrite.String())
}

func TestParseToolList(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		{"", nil, ""},
		{"  ", nil, ""},
		{"mcp", []string{"mcp"}, ""},
		{"mcp,getMcpTools", []string{"mcp", "getMcpTools"}, ""},
		{" mcp , getMcpTools ", []string{"mcp", "getMcpTools"}, ""},
		{"web_fetch,semantic-search", []string{"web_fetch", "semantic-search"}, ""},
		{"mcp,,x", nil, "entry 2 is empty"},
		{"mcp,", nil, "entry 2 is empty"},
		{"rm -rf", nil, "' ' at byte 2"},
		{"a;b", nil, "';' at byte 1"},
		{"é", nil, "at byte 0"},
	}
	for _, tt := range tests {
		got, err := ParseToolList(tt.in)
		if tt.err == "" {
			require.NoError(t, err, tt.in)
			assert.Equal(t, tt.want, got, tt.in)
			continue
		}
		require.Error(t, err, tt.in)
		assert.Equal(t, failure.Input, failure.KindOf(err))
		assert.Contains(t, err.Error(), tt.err)
	}
}

func TestArgs(t *testing.T) {
	tests := []struct {
		name string
		opts ArgsOptions
		want []string
		err  string
	}{
		{name: "unset mode is plan, never --force", opts: ArgsOptions{},
			want: []string{"--print", "--output-format", "stream-json", "--mode", "plan", "--trust"}},
		{name: "plan", opts: ArgsOptions{Mode: ModePlan},
			want: []string{"--print", "--output-format", "stream-json", "--mode", "plan", "--trust"}},
		{name: "ask", opts: ArgsOptions{Mode: ModeAsk},
			want: []string{"--print", "--output-format", "stream-json", "--mode", "ask", "--trust"}},
		{name: "write", opts: ArgsOptions{Mode: ModeWrite},
			want: []string{"--print", "--output-format", "stream-json", "--force", "--trust"}},
		{name: "model and resume", opts: ArgsOptions{Mode: ModeWrite, Model: "gpt-5.1-codex-high", Resume: "5f0c2b1e-9d3a"},
			want: []string{"--print", "--output-format", "stream-json", "--force", "--trust", "--model", "gpt-5.1-codex-high", "--resume", "5f0c2b1e-9d3a"}},
		{name: "a bracketed model passes through", opts: ArgsOptions{Model: "claude-4.5[thinking=true]"},
			want: []string{"--print", "--output-format", "stream-json", "--mode", "plan", "--trust", "--model", "claude-4.5[thinking=true]"}},
		{name: "partial output", opts: ArgsOptions{PartialOutput: true},
			want: []string{"--print", "--output-format", "stream-json", "--stream-partial-output", "--mode", "plan", "--trust"}},
		{name: "unknown mode", opts: ArgsOptions{Mode: "agent"}, err: "unknown mode"},
		{name: "auto refused", opts: ArgsOptions{Model: "auto"}, err: "refused"},
		{name: "Default refused", opts: ArgsOptions{Model: "Default"}, err: "refused"},
		{name: "model like an option", opts: ArgsOptions{Model: "--force"}, err: "starts with '-'"},
		{name: "model with a space", opts: ArgsOptions{Model: "gpt 5"}, err: "' ' at byte 3"},
		{name: "resume with a newline", opts: ArgsOptions{Resume: "abc\n--force"}, err: `'\n' at byte 3`},
		{name: "resume like an option", opts: ArgsOptions{Resume: "-x"}, err: "starts with '-'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Args(tt.opts)
			if tt.err != "" {
				require.Error(t, err)
				assert.Equal(t, failure.Input, failure.KindOf(err))
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			if tt.opts.Mode != ModeWrite {
				assert.NotContains(t, got, "--force")
			}
		})
	}
}

func TestClassifyMessage(t *testing.T) {
	tests := []struct {
		text string
		want failure.Kind
	}{
		{"You've hit your usage limit for Claude. Switch models or upgrade.", failure.Quota},
		{"Monthly spend limit reached", failure.Quota},
		{"quota exceeded", failure.Quota},
		{"Rate limit exceeded. Try again in 20s.", failure.RateLimited},
		{"429 Too Many Requests", failure.RateLimited},
		{"Authentication required. Please run cursor-agent login.", failure.Auth},
		{"Error: Not logged in", failure.Auth},
		{"401 Unauthorized", failure.Auth},
		{"Invalid API key provided", failure.Auth},
		{"the catalog index is missing", failure.Other},
		{"", failure.Other},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, ClassifyMessage(tt.text), tt.text)
	}
}
