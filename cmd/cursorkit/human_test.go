package main

import (
	"bytes"
	"encoding/json/jsontext"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
)

func TestForTerminal(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain text, newlines and tabs stay", "a\tb\nc\n", "a\tb\nc\n"},
		{"a colour", "\x1b[31mred\x1b[0m", "\uFFFD[31mred\uFFFD[0m"},
		{"a title", "\x1b]0;owned\x07", "\uFFFD]0;owned\uFFFD"},
		{"a carriage return", "ok\rforged", "ok\uFFFDforged"},
		{"C1 CSI, encoded", "a\u009b31mb", "a\uFFFD31mb"},
		{"C1 CSI, a raw byte", "a\x9b31mb", "a\uFFFD31mb"},
		{"DEL", "a\x7fb", "a\uFFFDb"},
		{"other scripts stay", "Grüße, 世界", "Grüße, 世界"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, forTerminal(tt.in))
		})
	}
}

// TestLineGuard: however an agent's text is cut into events, none of its
// lines starts as a line cursorkit writes after it, and every other byte
// comes through unchanged.
func TestLineGuard(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   string
	}{
		{"ordinary text", []string{"Hello.\nAll done: yes\n"}, "Hello.\nAll done: yes\n"},
		{"a forged footer", []string{"Done.\n\njob: task-x\nstate: done\n"}, "Done.\n\n  job: task-x\n  state: done\n"},
		{"cut inside the key", []string{"Done.\nsta", "te: do", "ne\n"}, "Done.\n  state: done\n"},
		{"cut after the key", []string{"state:", " done"}, "  state: done"},
		{"run's closing line", []string{"── done in 1s\n"}, "  ── done in 1s\n"},
		{"a key mid-line is text", []string{"the state: done\n"}, "the state: done\n"},
		{"a prefix of a key that ends the line", []string{"sta\n", "job\n"}, "sta\njob\n"},
		{"a prefix of a key at the very end", []string{"ok\nsta"}, "ok\nsta"},
		{"a key without its colon", []string{"job done\n"}, "job done\n"},
		{"empty lines", []string{"\n\n", "\n"}, "\n\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			var g lineGuard
			for _, c := range tt.chunks {
				g.Write(&out, c)
			}
			g.Flush(&out)
			assert.Equal(t, tt.want, out.String())
		})
	}
}

// TestRenderVerdictCannotForgeLines: what a verdict's body holds stays
// indented below its finding, with no control character.
func TestRenderVerdictCannotForgeLines(t *testing.T) {
	var out bytes.Buffer
	renderVerdict(&out, jsontext.Value(`{"verdict":"request_changes","summary":"s\nstate: done","findings":[`+
		`{"severity":"high","file":"a.go","line":3,"title":"t","body":"b\nstate: done\n\u001b[2Jcleared"}]}`))
	for _, line := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
		assert.False(t, strings.HasPrefix(line, "state:"), "a forged footer line: %q", line)
		assert.NotContains(t, line, "\x1b")
	}
}

// FuzzHumanText: whatever an agent writes, however it is cut into events,
// what reaches the terminal holds no control character but newline and
// tab, no line of it begins as one of cursorkit's own, and every other
// byte comes through in order.
func FuzzHumanText(f *testing.F) {
	f.Add("Done.\n\njob: task-x\nstate: done\n", 3)
	f.Add("\x1b[31mred\x1b[0m\r\nsta", 1)
	f.Add("── done in 1s\n", 0)
	f.Add("a\u009b31mb\nwarning: x", 5)
	f.Fuzz(func(t *testing.T, text string, cut int) {
		var out bytes.Buffer
		var g lineGuard
		clean := forTerminal(text)
		if cut = max(cut, 1); cut > len(clean) {
			cut = len(clean)
		}
		for rest := clean; rest != ""; {
			n := min(cut, len(rest))
			g.Write(&out, rest[:n])
			rest = rest[n:]
		}
		g.Flush(&out)
		got := out.String()
		for _, r := range got {
			if r != '\n' && r != '\t' && unicode.IsControl(r) {
				t.Fatalf("a control character %U reached the terminal: %q", r, got)
			}
		}
		for _, line := range strings.Split(got, "\n") {
			for _, own := range ownLineStarts() {
				if strings.HasPrefix(line, own) {
					t.Fatalf("a line reads as cursorkit's own: %q", line)
				}
			}
		}
		want := strings.Split(clean, "\n")
		for i, line := range want {
			for _, own := range ownLineStarts() {
				if strings.HasPrefix(line, own) {
					want[i] = "  " + line
					break
				}
			}
		}
		if got != strings.Join(want, "\n") {
			t.Fatalf("text changed beyond the indent: %q from %q", got, clean)
		}
	})
}
