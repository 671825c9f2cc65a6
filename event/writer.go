package event

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"io"

	"github.com/cursorkit/cursorkit/internal/jsonscan"
)

// Writer writes events to an io.Writer as NDJSON, one line each: exactly
// the bytes json.MarshalEncode writes for each through NewEncoder(w), the
// encoder `cursorkit run --json` writes with. A stream of a hundred
// thousand small events a second is common (docs/contract.md, "Agents"),
// and an Encoder checks again every byte of a value written whole, so a
// Writer writes an event straight to w when its bytes are known to be the
// Encoder's: every string in it valid UTF-8 without U+2028 or U+2029
// (which the Encoder escapes), and every raw value (a tool's args and
// result, an unknown event's raw) valid JSON written compactly, without
// U+2028 or U+2029. Any other event goes through the Encoder. A Writer is
// not safe for concurrent use.
type Writer struct {
	w    io.Writer
	enc  *jsontext.Encoder
	buf  []byte
	scan jsonscan.Scanner
}

// NewWriter returns a Writer of events to w.
func NewWriter(w io.Writer) *Writer {
	// The Encoder must not know w is a *bytes.Buffer: it would then
	// append into the buffer's spare capacity and take the Writer's
	// straight writes in between for its own free space.
	return &Writer{w: w, enc: NewEncoder(struct{ io.Writer }{w})}
}

// Encoder returns the Encoder (NewEncoder on the Writer's w) the Writer writes the
// other events with: a value that is not an event (a turn's outcome) is
// written through it, between two events. The Encoder writes each
// top-level value to w as soon as it is complete, so the two never
// interleave.
func (w *Writer) Encoder() *jsontext.Encoder { return w.enc }

// Write writes e and a newline. An error is the io.Writer's, or the
// Encoder's for an event it refuses (a raw value that is not JSON).
func (w *Writer) Write(e Event) error {
	b, ok := e.appendLine(w.buf[:0])
	w.buf = b[:0]
	if ok && w.plainRaws(e) {
		_, err := w.w.Write(b)
		return err
	}
	return json.MarshalEncode(w.enc, e)
}

// appendLine appends e's line as a Writer writes it straight, and ok;
// false when a string in it is not one quoteString writes.
func (e Event) appendLine(b []byte) ([]byte, bool) {
	b, ok := e.appendJSON(b, true)
	return append(b, '\n'), ok
}

// plainRaws reports whether the raw values of e are written as they are:
// valid, compact, and without what EscapeForJS escapes.
func (w *Writer) plainRaws(e Event) bool {
	switch e.Type {
	case TypeToolStarted, TypeToolCompleted:
		if e.Tool == nil {
			return true
		}
		return w.plainRaw(e.Tool.Args) && (e.Type == TypeToolStarted || w.plainRaw(e.Tool.Result))
	case TypeUnknown:
		return e.Unknown == nil || w.plainRaw(e.Unknown.Raw)
	}
	return true
}

// jsSeparator is the start of U+2028 and U+2029 in UTF-8.
var jsSeparator = []byte("\xe2\x80")

func (w *Writer) plainRaw(v jsontext.Value) bool {
	if len(v) == 0 {
		return true // written as null
	}
	for rest := v; ; {
		i := bytes.Index(rest, jsSeparator)
		if i < 0 {
			break
		}
		if i+2 < len(rest) && (rest[i+2] == 0xa8 || rest[i+2] == 0xa9) {
			return false
		}
		rest = rest[i+2:]
	}
	// The value is written inside the event's object.
	return w.scan.Compact(v, 1)
}
