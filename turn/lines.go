package turn

import "bytes"

// lineWriter is an io.Writer that calls line for each line written to it
// (its "\n" or "\r\n" trimmed), each cut to max bytes (the rest of a
// longer line is dropped); a last line without a terminator is never
// called. It is used from one goroutine (supervise's stderr reader).
type lineWriter struct {
	max  int
	line func([]byte)
	buf  []byte
	long bool // the line in buf was cut: drop until its end
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !w.long {
			if room := w.max - len(w.buf); len(chunk) > room {
				chunk, w.long = chunk[:room], true
			}
			w.buf = append(w.buf, chunk...)
		}
		if i < 0 {
			break
		}
		w.line(bytes.TrimSuffix(w.buf, []byte("\r")))
		w.buf, w.long = w.buf[:0], false
		p = p[i+1:]
	}
	return n, nil
}
