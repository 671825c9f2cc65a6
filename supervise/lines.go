package supervise

import (
	"bytes"
	"io"
)

// Read buffer sizes: a stream starts with a small buffer, which is all a
// turn of a few short events ever needs (and many sessions may run at
// once). The buffer doubles, up to maxReadBuffer, when a read fills it (a
// fast producer, for which fewer, larger reads matter) or a line does not
// fit. Lines up to the buffer's length are delivered straight from it with
// no copy; longer ones are assembled in a reused side buffer.
const (
	initialReadBuffer = 1 << 10
	maxReadBuffer     = 64 << 10
)

// longBufferKeep caps the side buffer kept between long lines, so one
// huge line does not pin MaxLineBytes of memory for the rest of a run.
const longBufferKeep = 1 << 20

// lineSplitter reads a stream to its end, line by line, never stopping
// early: an oversized line is reported and skipped up to its newline, and
// draining continues. It allocates nothing per line once warmed up.
type lineSplitter struct {
	max        int
	keepEnding bool
	onLine     func([]byte)
	onOversize func(int64)
	onDrained  func() // after a line, when nothing more is buffered

	long     []byte // the line assembled so far when it outgrew the buffer
	skipping bool   // inside an oversized line
	skipped  int64  // bytes of the oversized line so far
}

// run reads r until EOF or an error (a closed pipe) and returns the number
// of lines delivered and of oversized lines skipped.
func (ls *lineSplitter) run(r io.Reader) (lines, oversized int64) {
	lr := lineReader{rd: r, buf: make([]byte, initialReadBuffer)}
	for {
		chunk, full, err := lr.readLine()
		if full {
			ls.partial(chunk)
			continue
		}
		if len(chunk) > 0 || len(ls.long) > 0 || ls.skipping {
			switch ls.complete(chunk) {
			case lineDelivered:
				lines++
			case lineOversized:
				oversized++
			}
			if ls.onDrained != nil && lr.buffered() == 0 {
				ls.onDrained()
			}
		}
		if err != nil {
			return lines, oversized
		}
	}
}

// lineReader is bufio.Reader's ReadSlice('\n') over a buffer that starts
// small and grows (see initialReadBuffer).
type lineReader struct {
	rd   io.Reader
	buf  []byte
	r, w int   // buf[r:w] is buffered, not yet returned
	err  error // from the last read, returned once buf[r:w] is used up
}

// maxEmptyReads is how many reads returning nothing and no error in a row
// are taken for a broken reader (io.ErrNoProgress), as in bufio.
const maxEmptyReads = 100

// readLine returns the next line, "\n" included, as a slice of the buffer
// valid until the next call. full reports a piece of a line that filled
// the whole buffer at its largest; the rest of the line follows. At the
// end of the stream it returns what is left (possibly empty) and the
// error.
func (lr *lineReader) readLine() (chunk []byte, full bool, err error) {
	searched := 0 // bytes of buf[r:w] known to hold no newline
	for {
		if i := bytes.IndexByte(lr.buf[lr.r+searched:lr.w], '\n'); i >= 0 {
			end := lr.r + searched + i + 1
			chunk, lr.r = lr.buf[lr.r:end], end
			return chunk, false, nil
		}
		searched = lr.w - lr.r
		if lr.err != nil {
			chunk, lr.r = lr.buf[lr.r:lr.w], lr.w
			err, lr.err = lr.err, nil
			return chunk, false, err
		}
		if searched == len(lr.buf) {
			if len(lr.buf) == maxReadBuffer {
				chunk, lr.r = lr.buf[lr.r:lr.w], lr.w
				return chunk, true, nil
			}
			lr.grow(2 * len(lr.buf))
		}
		lr.fill()
	}
}

// fill reads once into the free end of the buffer, first moving what is
// buffered to its start; a read that fills the buffer doubles it for the
// next one.
func (lr *lineReader) fill() {
	if lr.r > 0 {
		lr.w = copy(lr.buf, lr.buf[lr.r:lr.w])
		lr.r = 0
	}
	for range maxEmptyReads {
		n, err := lr.rd.Read(lr.buf[lr.w:])
		if n < 0 || n > len(lr.buf)-lr.w {
			panic("supervise: reader returned an impossible count")
		}
		filled := n > 0 && lr.w+n == len(lr.buf)
		lr.w += n
		if err != nil {
			lr.err = err
			return
		}
		if n > 0 {
			if filled && len(lr.buf) < maxReadBuffer {
				lr.grow(2 * len(lr.buf))
			}
			return
		}
	}
	lr.err = io.ErrNoProgress
}

// grow replaces the buffer with one of size bytes (at most
// maxReadBuffer), keeping what is buffered.
func (lr *lineReader) grow(size int) {
	buf := make([]byte, min(size, maxReadBuffer))
	lr.w = copy(buf, lr.buf[lr.r:lr.w])
	lr.r = 0
	lr.buf = buf
}

// buffered returns how many bytes are buffered and not yet returned.
func (lr *lineReader) buffered() int { return lr.w - lr.r }

// partial takes a piece of a line that filled the whole read buffer.
func (ls *lineSplitter) partial(chunk []byte) {
	if ls.skipping {
		ls.skipped += int64(len(chunk))
		return
	}
	// One more byte than max may still be a "\r" that gets trimmed.
	if len(ls.long)+len(chunk) > ls.max+1 {
		ls.skipping = true
		ls.skipped = int64(len(ls.long) + len(chunk))
		ls.release()
		return
	}
	ls.long = append(ls.long, chunk...)
}

type lineResult int

const (
	lineDelivered lineResult = iota
	lineOversized
)

// complete takes the end of a line: chunk ends with "\n", or is the final
// unterminated piece at EOF (possibly empty when the line so far was
// assembled in ls.long).
func (ls *lineSplitter) complete(chunk []byte) lineResult {
	if ls.skipping {
		size := ls.skipped + int64(len(chunk))
		size -= int64(len(chunk) - len(trimEnding(chunk)))
		ls.skipping, ls.skipped = false, 0
		if ls.onOversize != nil {
			ls.onOversize(size)
		}
		return lineOversized
	}
	line := chunk
	if len(ls.long) > 0 {
		ls.long = append(ls.long, chunk...)
		line = ls.long
	}
	content := trimEnding(line)
	if len(content) > ls.max {
		ls.release()
		if ls.onOversize != nil {
			ls.onOversize(int64(len(content)))
		}
		return lineOversized
	}
	if ls.onLine != nil {
		if ls.keepEnding {
			ls.onLine(line)
		} else {
			ls.onLine(content)
		}
	}
	ls.release()
	return lineDelivered
}

// release empties the side buffer, dropping it when it grew large.
func (ls *lineSplitter) release() {
	if cap(ls.long) > longBufferKeep {
		ls.long = nil
		return
	}
	ls.long = ls.long[:0]
}

// trimEnding drops a trailing "\n" and one "\r" before it.
func trimEnding(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	return bytes.TrimSuffix(line, []byte{'\r'})
}
