package main

import (
	"io"
	"strings"
	"unicode"
)

// forTerminal returns s with every control character but newline and tab
// (C0, DEL, C1; invalid UTF-8 too) replaced by U+FFFD: text an agent or a
// review verdict wrote reaches a terminal without an escape sequence that
// moves the cursor, recolours, retitles or clears it, and without a
// carriage return that overwrites the line.
func forTerminal(s string) string {
	return strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && unicode.IsControl(r) {
			return unicode.ReplacementChar
		}
		return r
	}, s)
}

// ownLineStarts are how the lines cursorkit writes after an agent's text
// begin: the job footer's, a review verdict's, run's closing line.
func ownLineStarts() []string {
	return []string{"cursor-session: ", "job: ", "sandbox: ", "delivery: ", "semantic: ", "warning: ", "state: ",
		"failure: ", "verdict: ", "summary: ", "findings: ", "── "}
}

// lineGuard writes an agent's streamed text so that none of its lines
// reads as one cursorkit writes after it: a line that begins as one of
// ownLineStarts is indented by two spaces. The start of a line is held
// back until it tells (at most a few bytes, or its end); Flush writes what
// is held when the text is over.
type lineGuard struct {
	held    []byte // the start of the current line, not yet told
	midLine bool   // the current line's start was written
}

// Write writes text, which forTerminal has cleaned, to out. A write error
// shows at the next write or flush of out, as with a bufio.Writer.
func (g *lineGuard) Write(out io.Writer, text string) {
	for text != "" {
		end := strings.IndexByte(text, '\n') + 1 // 0: no newline
		if end == 0 {
			end = len(text)
		}
		part := text[:end]
		text = text[end:]
		if g.midLine {
			_, _ = io.WriteString(out, part)
			g.midLine = !strings.HasSuffix(part, "\n")
			continue
		}
		g.held = append(g.held, part...)
		own, told := tellLine(string(g.held))
		if !told {
			continue // no newline yet, and it may still become one of ours
		}
		if own {
			_, _ = io.WriteString(out, "  ")
		}
		_, _ = out.Write(g.held)
		g.midLine = !strings.HasSuffix(part, "\n")
		g.held = g.held[:0]
	}
}

// Flush writes the start of a line still held.
func (g *lineGuard) Flush(out io.Writer) {
	_, _ = out.Write(g.held)
	g.midLine = g.midLine || len(g.held) > 0
	g.held = g.held[:0]
}

// tellLine tells whether start, the start of a line, begins as one of
// ownLineStarts (own); told is false while it is too short to tell and
// holds no newline.
func tellLine(start string) (own, told bool) {
	ended := strings.HasSuffix(start, "\n")
	for _, p := range ownLineStarts() {
		if strings.HasPrefix(start, p) {
			return true, true
		}
		if !ended && strings.HasPrefix(p, start) {
			return false, false
		}
	}
	return false, true
}
