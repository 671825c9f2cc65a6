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
	"github.com/cursorkit/cursorkit/internal/safefile"
	"github.com/cursorkit/cursorkit/turn"
)

// The output file of a background job (docs/contract.md, "Jobs") holds
// the NDJSON lines `run --json` would have printed, events then the
// outcome line without the job record, appended as they arrive. Past
// maxOutputBytes of events one warnOutputTruncated warning line ends them;
// the outcome line is always written. A line read back over maxOutputLine
// is not one the writer made, nor is a file over maxOutputFile (the
// events, the warning and the outcome line, each line under its bound).
const (
	maxOutputBytes      = 64 << 20
	maxOutputLine       = 16 << 20
	maxOutputFile       = maxOutputBytes + 2*maxOutputLine
	warnOutputTruncated = "output_truncated"
)

// outputPath is where job id keeps its output.
func (s Store) outputPath(id string) string { return filepath.Join(s.runDir(id), "events.ndjson") }

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

// createOutput creates job id's output file (0600, with its directory);
// an existing one is failure.Setup: a job's output has one writer, once.
func (s Store) createOutput(id string) (*OutputWriter, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	path := s.outputPath(id)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, failure.Wrap(failure.Setup, err, "creating the job's run directory")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, failure.Wrap(failure.Setup, err, "creating the job's output file")
	}
	w := &OutputWriter{f: f, path: path, max: maxOutputBytes}
	w.enc = event.NewEncoder(&w.buf)
	return w, nil
}

// Path is the file written.
func (w *OutputWriter) Path() string { return w.path }

// Events appends events, one line each, in one write. Past the bound it
// writes the output_truncated warning instead, once, then nothing.
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
				Code: warnOutputTruncated, Message: "the job's output reached its bound; later events were not kept"}})
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

// OutputEnd is what ReadOutput found besides the events: how many event
// lines it passed on, the outcome line (nil when the writer did not get
// to it: the job runs, or its worker died), whether the file ended in a
// line cut short by a killed writer (Torn, left out), and whether the
// writer's bound was reached (the last event is the output_truncated
// warning).
type OutputEnd struct {
	Events    int
	Outcome   jsontext.Value
	Torn      bool
	Truncated bool
}

// ReadOutput reads job id's output file, handing each event line (one
// JSON object, without its newline) to each in order; an error from each
// stops the read and is returned. A missing file is failure.Input. A torn
// last line is left out and reported; a whole line that is no JSON
// object, an over-long line, a line after the outcome or a file over
// maxOutputFile is failure.Unclassified naming the file (the writer makes
// none of them). Only a regular file is read, and its open never blocks:
// anything else there (a FIFO, a device) is failure.Setup.
func (s Store) ReadOutput(id string, each func(jsontext.Value) error) (OutputEnd, error) {
	if err := checkID(id); err != nil {
		return OutputEnd{}, err
	}
	path := s.outputPath(id)
	r, err := safefile.Open(path, maxOutputFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return OutputEnd{}, failure.New(failure.Input, "job %s kept no output", id)
	case errors.As(err, new(*safefile.TooLargeError)):
		return OutputEnd{}, failure.New(failure.Unclassified, "the output file %s is over %d bytes", path, maxOutputFile)
	case err != nil:
		return OutputEnd{}, failure.Wrap(failure.Setup, err, "opening the job's output file")
	}
	defer r.Close()
	end, err := parseOutput(r, each)
	var fe *failure.Error
	if err != nil && errors.As(err, &fe) && fe.Kind == failure.Unclassified {
		return end, failure.Wrap(failure.Unclassified, err, "the output file %s", path)
	}
	return end, err
}

// parseOutput is ReadOutput's parser, on any reader.
func parseOutput(r io.Reader, each func(jsontext.Value) error) (OutputEnd, error) {
	// Lenient as event.NewEncoder writes: invalid UTF-8 and repeated names
	// of an agent's raw values pass through.
	lenient := json.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	var end OutputEnd
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for lineNo := 1; ; lineNo++ {
		line = line[:0]
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			if len(line)+len(chunk) > maxOutputLine {
				return end, failure.New(failure.Unclassified, "line %d is over %d bytes", lineNo, maxOutputLine)
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
		if errors.As(err, new(*safefile.TooLargeError)) {
			return end, failure.New(failure.Unclassified, "it is over %d bytes", maxOutputFile)
		}
		if err != nil {
			return end, failure.Wrap(failure.Setup, err, "reading the output")
		}
		v := jsontext.Value(bytes.TrimRight(line, "\r\n"))
		var head struct {
			Type string `json:"type"`
		}
		ok := len(v) > 0 && v[0] == '{' && json.Unmarshal(v, &head, lenient) == nil
		switch {
		case !ok:
			return end, failure.New(failure.Unclassified, "line %d is not one JSON object", lineNo)
		case end.Outcome != nil:
			return end, failure.New(failure.Unclassified, "line %d follows the outcome", lineNo)
		case head.Type == "outcome":
			end.Outcome = append(jsontext.Value(nil), v...)
			continue
		}
		end.Events++
		var warning struct {
			Code string `json:"code"`
		}
		end.Truncated = head.Type == string(event.TypeWarning) && json.Unmarshal(v, &warning, lenient) == nil &&
			warning.Code == warnOutputTruncated
		if err := each(v); err != nil {
			return end, err
		}
	}
}
