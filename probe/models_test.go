package probe

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseModels(t *testing.T) {
	tests := []struct {
		name         string
		output       string
		models       []Model
		empty        bool
		unrecognized int
	}{
		{
			name: "documented shape",
			output: "Available models\n\nauto - Auto (default)\nclaude-4.5-sonnet - Sonnet 4.5 (current)\n" +
				"gpt-5 - GPT-5 (current, default)\n\nTip: use --model <id> (or /model <id> in interactive mode) to switch.\n",
			models: []Model{
				{ID: "auto", Label: "Auto", Default: true},
				{ID: "claude-4.5-sonnet", Label: "Sonnet 4.5", Current: true},
				{ID: "gpt-5", Label: "GPT-5", Current: true, Default: true},
			},
		},
		{
			name: "spinner with carriage-return overwrite, ANSI and CRLF",
			output: "\x1b[?25l⠋ Loading models…\r⠙ Loading models…\r\x1b[2K\x1b[1GAvailable models\r\n\r\n" +
				"\x1b[1mcomposer-2.5\x1b[0m - Composer 2.5\r\n\x1b[36mgrok-4.7-high-fast\x1b[39m - Grok 4.7 High Fast (default, current)\r\n" +
				"\r\nTip: use --model <id> to switch.\r\n\x1b[?25h",
			models: []Model{
				{ID: "composer-2.5", Label: "Composer 2.5"},
				{ID: "grok-4.7-high-fast", Label: "Grok 4.7 High Fast", Current: true, Default: true},
			},
		},
		{
			name:   "spinner line on its own",
			output: "Loading models...\nAvailable models:\nx - X\n",
			models: []Model{{ID: "x", Label: "X"}},
		},
		{
			name:   "empty account",
			output: "\x1b[2KNo models available for this account.\n",
			models: []Model{},
			empty:  true,
		},
		{
			name:   "nothing at all",
			output: "",
			models: []Model{},
		},
		{
			name:   "dedupe, first wins, case-insensitive",
			output: "gpt-5 - First\nGPT-5 - Second (current)\ngpt-5 - Third\n",
			models: []Model{{ID: "gpt-5", Label: "First"}},
		},
		{
			name:   "split on the first separator only",
			output: "sonnet-4.5-thinking - Sonnet 4.5 - Thinking\n",
			models: []Model{{ID: "sonnet-4.5-thinking", Label: "Sonnet 4.5 - Thinking"}},
		},
		{
			name:   "other parenthesised text stays in the label",
			output: "o3 - O3 (Preview)\nx - X (preview, default)\n",
			models: []Model{{ID: "o3", Label: "O3 (Preview)"}, {ID: "x", Label: "X (preview, default)"}},
		},
		{
			name:   "bracketed id and empty label",
			output: "claude-opus-4-8[context=1m] - \n",
			models: []Model{{ID: "claude-opus-4-8[context=1m]", Label: "claude-opus-4-8[context=1m]"}},
		},
		{
			name:         "unrecognized lines are reported, not models",
			output:       "Error: Your macOS login keychain is locked.\nsome words - not an id\nnot a model line\nok - OK\n",
			models:       []Model{{ID: "ok", Label: "OK"}},
			unrecognized: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := parseModels(tt.output)
			assert.Equal(t, tt.models, c.Models)
			assert.Equal(t, tt.empty, c.Empty)
			assert.Len(t, c.Unrecognized, tt.unrecognized)
		})
	}
}

func TestParseModelsBoundsUnrecognized(t *testing.T) {
	c := parseModels(strings.Repeat("garbage line here\n", 100) + strings.Repeat("z", 1000) + "\n")
	assert.Len(t, c.Unrecognized, maxUnrecognized)
	assert.Empty(t, c.Models)
	assert.NotNil(t, c.Models)
}

func FuzzParseModels(f *testing.F) {
	f.Add("Available models\n\nauto - Auto (default)\nx - X (current)\nTip: y\n")
	f.Add("⠋ Loading models…\r\x1b[2KAvailable models\r\nNo models available for this account.\r\n")
	f.Add("a - b - c (current, default)\n\r\r\n - \n(")
	f.Fuzz(func(t *testing.T, output string) {
		c := parseModels(output)
		if c.Models == nil {
			t.Fatal("nil models")
		}
		if c.Empty && len(c.Models) > 0 {
			t.Fatal("empty state with models")
		}
		if len(c.Unrecognized) > maxUnrecognized {
			t.Fatalf("%d unrecognized lines kept", len(c.Unrecognized))
		}
		seen := map[string]bool{}
		for _, m := range c.Models {
			key := strings.ToLower(m.ID)
			if m.ID == "" || strings.ContainsFunc(m.ID, isSpaceOrControl) || strings.Contains(m.ID, "\x1b") {
				t.Fatalf("bad id %q", m.ID)
			}
			if seen[key] {
				t.Fatalf("duplicate id %q", m.ID)
			}
			seen[key] = true
			if m.Label == "" {
				t.Fatalf("model %q without label", m.ID)
			}
		}
	})
}
