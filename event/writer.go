package event

import (
	"encoding/json/jsontext"
	"io"
)

// Writer writes events to an io.Writer as NDJSON, one line each, through
// NewEncoder(w), the encoder `cursorkit run --json` writes with: each
// event with Event.MarshalJSONTo, and any other value (a turn's outcome)
// through Encoder, between two events.
// Give it a bufio.Writer, flushed when the input pauses, to write many
// events at once. A Writer is not safe for concurrent use.
type Writer struct {
	enc *jsontext.Encoder
}

// NewWriter returns a Writer of events to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{enc: NewEncoder(w)}
}

// Encoder returns the Encoder (NewEncoder on the Writer's w) the Writer
// writes with: a value that is not an event (a turn's outcome) is written
// through it, between two events. The Encoder writes each top-level value
// to w as soon as it is complete, so the two never interleave.
func (w *Writer) Encoder() *jsontext.Encoder { return w.enc }

// Write writes e and a newline. An error is the io.Writer's, or the
// Encoder's for an event it refuses (a raw value that is not JSON).
func (w *Writer) Write(e Event) error {
	return e.MarshalJSONTo(w.enc)
}
