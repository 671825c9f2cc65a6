package jobs

import (
	"bufio"
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/turn"
)

// The output file of a background job (docs/contract.md, "Jobs"): the
// NDJSON lines `run --json` would have printed, events then the outcome
// line (without the job record, which a reader adds from the record as it
// is then), appended as they arrive.
const (
	// MaxOutputBytes bounds a job's event lines. Past it one
	// output_truncated warning line is written and later events are
	// dropped; the outcome line is always written.
	MaxOutputBytes = 64 << 20
	// MaxOutputLine bounds one line read back: a longer line is not one
	// the writer made.
	MaxOutputLine = 16 << 20
	// WarnOutputTruncated is the warning that ends a job's events when
	// MaxOutputBytes was reached.
	WarnOutputTruncated = "output_truncated"
)

// OutputPath is where job id keeps its output: <data>/runs/<id>/events.ndjson.
func (s Store) OutputPath(id string) string {
	return filepath.Join(s.Dir, "runs", id, "events.ndjson")
}

// OutputWriter appends a job's event lines to its output file. Each call
// writes whole lines in one write to a file opened for appending, so a
// kill at any moment leaves whole lines and at most one torn last line,
// which ReadOutput leaves out. One writer per job, not safe for
// concurrent use.
type OutputWriter struct {
	f         *os.File
	path      string
	n, max    int64
	truncated bool
	buf       bytes.Buffer
	enc       *jsontext.Encoder
}

// CreateOutput creates job id's output file (0600, with its directory);
// an existing one is failure.Setup: a job's output has one writer, once.
func (s Store) CreateOutput(id string) (*OutputWriter, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	path := s.OutputPath(id)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, failure.Wrap(failure.Setup, err, "creating the job's run directory")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, failure.Wrap(failure.Setup, err, "creating the job's output file")
	}
	w := &OutputWriter{f: f, path: path, max: MaxOutputBytes}
	w.enc = event.NewEncoder(&w.buf)
	return w, nil
}

// Path is the file written.
func (w *OutputWriter) Path() string { return w.path }

// Events appends events, one line each, in one write. Past the bound the
// first call writes the output_truncated warning instead and later calls
// write nothing.
func (w *OutputWriter) Events(events ...event.Event) error {
	if w.truncated || len(events) == 0 {
		return nil
	}
	w.buf.Reset()
	for _, e := range events {
		mark := w.buf.Len()
		if err := json.MarshalEncode(w.enc, e); err != nil {
			return failure.Wrap(failure.Unclassified, err, "encoding an event of the job's output")
		}
		if w.n+int64(w.buf.Len()) > w.max {
			w.buf.Truncate(mark)
			w.enc.Reset(&w.buf)
			w.truncated = true
			_ = json.MarshalEncode(w.enc, event.Event{Type: event.TypeWarning, Warning: &event.Warning{
				Code: WarnOutputTruncated, Message: "the job's output reached its bound; later events were not kept"}})
			break
		}
	}
	return w.write()
}

// Outcome appends the outcome line (run's, without the job record) and
// syncs the file: the output is complete.
func (w *OutputWriter) Outcome(o turn.Outcome) error {
	w.buf.Reset()
	if err := json.MarshalEncode(w.enc, o); err != nil {
		return failure.Wrap(failure.Unclassified, err, "encoding the job's outcome")
	}
	if err := w.write(); err != nil {
		return err
	}
	if err := w.f.Sync(); err != nil {
		return failure.Wrap(failure.Setup, err, "syncing the job's output file")
	}
	return nil
}

func (w *OutputWriter) write() error {
	if w.buf.Len() == 0 {
		return nil
	}
	n, err := w.f.Write(w.buf.Bytes())
	w.n += int64(n)
	if err != nil {
		return failure.Wrap(failure.Setup, err, "writing the job's output file")
	}
	return nil
}

// Close closes the file.
func (w *OutputWriter) Close() error {
	if err := w.f.Close(); err != nil {
		return failure.Wrap(failure.Setup, err, "closing the job's output file")
	}
	return nil
}

// OutputEnd is what ReadOutput found besides the events.
type OutputEnd struct {
	// Events is how many event lines were passed on.
	Events int
	// Outcome is the outcome line, nil when the writer did not get to it
	// (the job runs, or its worker died).
	Outcome jsontext.Value
	// Torn: the file ended in a line cut short (a writer killed
	// mid-write), which was left out.
	Torn bool
	// Truncated: the writer's bound was reached (the last event is the
	// output_truncated warning).
	Truncated bool
}

// ReadOutput reads job id's output file, handing each event line (one
// JSON object, without its newline) to each in order. A missing file is
// failure.Input. A torn last line is left out and reported, never a
// failure; a whole line that is no JSON object, an over-long line or a
// line after the outcome is failure.Unclassified naming the file (the writer
// makes none of them). An error from each stops the read and is returned.
func (s Store) ReadOutput(id string, each func(jsontext.Value) error) (OutputEnd, error) {
	if err := CheckID(id); err != nil {
		return OutputEnd{}, err
	}
	path := s.OutputPath(id)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return OutputEnd{}, failure.New(failure.Input, "job %s kept no output", id)
	}
	if err != nil {
		return OutputEnd{}, failure.Wrap(failure.Setup, err, "opening the job's output file")
	}
	defer f.Close()
	end, err := parseOutput(f, each)
	var fe *failure.Error
	if err != nil && errors.As(err, &fe) && fe.Kind == failure.Unclassified {
		return end, failure.Wrap(failure.Unclassified, err, "the output file %s", path)
	}
	return end, err
}

// parseOutput is ReadOutput's parser, on any reader.
func parseOutput(r io.Reader, each func(jsontext.Value) error) (OutputEnd, error) {
	var end OutputEnd
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for lineNo := 1; ; lineNo++ {
		line = line[:0]
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			if len(line)+len(chunk) > MaxOutputLine {
				return end, failure.New(failure.Unclassified, "line %d is over %d bytes", lineNo, MaxOutputLine)
			}
			line = append(line, chunk...)
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if errors.Is(err, io.EOF) {
			if len(line) > 0 {
				end.Torn = true
			}
			return end, nil
		}
		if err != nil {
			return end, failure.Wrap(failure.Setup, err, "reading the output")
		}
		v := jsontext.Value(bytes.TrimRight(line, "\r\n"))
		kind, ok := lineType(v)
		switch {
		case !ok:
			return end, failure.New(failure.Unclassified, "line %d is not one JSON object", lineNo)
		case end.Outcome != nil:
			return end, failure.New(failure.Unclassified, "line %d follows the outcome", lineNo)
		case kind == "outcome":
			end.Outcome = append(jsontext.Value(nil), v...)
			continue
		}
		end.Events++
		end.Truncated = kind == string(event.TypeWarning) && isTruncation(v)
		if err := each(v); err != nil {
			return end, err
		}
	}
}

// lenient reads what event.NewEncoder writes (invalid UTF-8 and repeated
// names of an agent's raw values pass through).
func lenient() json.Options {
	return json.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
}

// lineType is the "type" member of a line that is one JSON object.
func lineType(v jsontext.Value) (string, bool) {
	var head struct {
		Type string `json:"type"`
	}
	if len(v) == 0 || v[0] != '{' || json.Unmarshal(v, &head, lenient()) != nil {
		return "", false
	}
	return head.Type, true
}

func isTruncation(v jsontext.Value) bool {
	var w struct {
		Code string `json:"code"`
	}
	return json.Unmarshal(v, &w, lenient()) == nil && w.Code == WarnOutputTruncated
}
