package supervise

import (
	"bufio"
	"bytes"
	"io"
)

// readBufferSize is the bufio.Reader size: lines up to this length are
// delivered straight from its buffer with no copy; longer ones are
// assembled in a reused side buffer.
const readBufferSize = 64 << 10

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
	br := bufio.NewReaderSize(r, readBufferSize)
	for {
		chunk, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
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
			if ls.onDrained != nil && br.Buffered() == 0 {
				ls.onDrained()
			}
		}
		if err != nil {
			return lines, oversized
		}
	}
}

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
