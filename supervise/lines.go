package supervise

import (
	"bytes"
	"io"
	"time"
)

// Read buffer sizes: a stream starts small, which is all a turn of a few
// short events needs (and many sessions may run at once). The buffer
// doubles, up to maxReadBuffer, when a read fills it or a line does not
// fit; a hot stream may raise that limit. Lines that fit are delivered
// straight from it; longer ones are assembled in a reused side buffer.
const (
	initialReadBuffer = 1 << 10
	maxReadBuffer     = 64 << 10
)

// A hot stream asks the kernel once for a pipe of hotPipeSize; its buffer
// may then double up to the pipe's new capacity, at most hotReadBuffer: a
// quarter of the pipe reads as fast as all of it (four reads a pipe-full),
// and a larger buffer only raises the heap and GC's goal with it.
const (
	hotPipeSize   = 1 << 20
	hotReadBuffer = 256 << 10
)

// A stream is hot when at least hotBytes arrive within hotWindow (over
// 40 MB/s, far beyond an agent's token rate). Only such a stream gets a
// large pipe, because pipe memory is counted per user: past
// fs/pipe-user-pages-soft every new pipe of the user gets a single page,
// so hundreds of quiet sessions must not each hold a large one.
const (
	hotBytes  = 4 << 20
	hotWindow = 100 * time.Millisecond
)

// hotStream decides from each read's size and time when a stream is hot.
type hotStream struct {
	windowStart time.Duration
	windowBytes int64
}

// observe counts a read of n bytes at now and reports whether hotBytes
// arrived within the current window (afresh once older than hotWindow).
func (h *hotStream) observe(n int, now time.Duration) bool {
	if now-h.windowStart > hotWindow {
		h.windowStart, h.windowBytes = now, 0
	}
	h.windowBytes += int64(n)
	return h.windowBytes >= hotBytes
}

// pipeGrowth enlarges a hot stream's pipe, once: grow asks for a pipe of
// size bytes and returns its capacity, or 0 when it could not enlarge it.
type pipeGrowth struct {
	grow func(size int) int
	now  func() time.Duration
	hot  hotStream
}

// longBufferKeep caps the side buffer kept, so one huge line is not pinned.
const longBufferKeep = 1 << 20

// lineSplitter reads a stream to its end, line by line: an oversized line
// is reported and skipped up to its newline. It allocates nothing per line
// once warmed up.
type lineSplitter struct {
	max        int
	keepEnding bool
	passLong   bool // hand oversized lines to onLine in pieces (needs keepEnding)
	onLine     func([]byte)
	onOversize func(int64)
	onDrained  func()      // after a line, when nothing more is buffered
	growth     *pipeGrowth // nil: the pipe and buffer limits stay as they are
	cutShort   func() bool // at EOF: drop an unterminated last line (never with passLong)

	long     []byte // the line assembled so far when it outgrew the buffer
	skipping bool   // inside an oversized line (skipped, or passed on in pieces)
	skipped  int64  // bytes of the oversized line so far
}

// run reads r to EOF or an error and counts lines delivered and oversized.
func (ls *lineSplitter) run(r io.Reader) (lines, oversized int64) {
	lr := newLineReader(r)
	lr.growth = ls.growth
	for {
		chunk, full, err := lr.readLine()
		if full {
			ls.partial(chunk)
			continue
		}
		if err != nil && !ls.passLong && ls.cutShort != nil && ls.cutShort() {
			return lines, oversized // a line the stopped child never finished
		}
		if len(chunk) > 0 || len(ls.long) > 0 || ls.skipping {
			if ls.complete(chunk) {
				oversized++
			} else {
				lines++
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

// lineReader is bufio.Reader's ReadSlice('\n') over a buffer growing to limit.
type lineReader struct {
	rd     io.Reader
	buf    []byte
	limit  int
	r, w   int         // buf[r:w] is buffered, not yet returned
	err    error       // from the last read, returned once buf[r:w] is used up
	growth *pipeGrowth // nil once tried, or when there is nothing to grow
}

func newLineReader(r io.Reader) lineReader {
	return lineReader{rd: r, buf: make([]byte, initialReadBuffer), limit: maxReadBuffer}
}

// maxEmptyReads is how many reads returning nothing and no error in a row
// are taken for a broken reader (io.ErrNoProgress), as in bufio.
const maxEmptyReads = 100

// readLine returns the next line, "\n" included, as a slice of the buffer
// valid until the next call. full reports a piece of a line that filled
// the buffer at its largest. At the end of the stream it returns what is
// left (possibly empty) and the error.
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
			if len(lr.buf) == lr.limit {
				chunk, lr.r = lr.buf[lr.r:lr.w], lr.w
				return chunk, true, nil
			}
			lr.grow(2 * len(lr.buf))
		}
		lr.fill()
	}
}

// fill reads once into the free end of the buffer, first moving what is
// buffered to its start; a read that fills the buffer doubles it.
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
			if lr.growth != nil {
				lr.observe(n)
			}
			if filled && len(lr.buf) < lr.limit {
				lr.grow(2 * len(lr.buf))
			}
			return
		}
	}
	lr.err = io.ErrNoProgress
}

// observe feeds a read of n bytes to the hot-stream decision; when the
// stream turns hot it tries, once, to enlarge the pipe and the limit.
func (lr *lineReader) observe(n int) {
	g := lr.growth
	if !g.hot.observe(n, g.now()) {
		return
	}
	lr.growth = nil
	if size := g.grow(hotPipeSize); size > lr.limit {
		lr.limit = min(size, hotReadBuffer)
	}
}

func (lr *lineReader) grow(size int) {
	buf := make([]byte, min(size, lr.limit))
	lr.w = copy(buf, lr.buf[lr.r:lr.w])
	lr.r = 0
	lr.buf = buf
}

func (lr *lineReader) buffered() int { return lr.w - lr.r }

// partial takes a piece of a line that filled the whole read buffer.
func (ls *lineSplitter) partial(chunk []byte) {
	if ls.skipping {
		ls.skipped += int64(len(chunk))
		ls.pass(chunk)
		return
	}
	// One more byte than max may still be a "\r" that gets trimmed.
	if len(ls.long)+len(chunk) > ls.max+1 {
		ls.skipping = true
		ls.skipped = int64(len(ls.long) + len(chunk))
		ls.pass(ls.long)
		ls.pass(chunk)
		ls.release()
		return
	}
	ls.long = append(ls.long, chunk...)
}

// complete takes the end of a line, ending with "\n" or the final piece at
// EOF (possibly empty), and reports whether the line was oversized.
func (ls *lineSplitter) complete(chunk []byte) (oversized bool) {
	if ls.skipping {
		ls.pass(chunk)
		size := ls.skipped + int64(len(chunk))
		size -= int64(len(chunk) - len(trimEnding(chunk)))
		ls.skipping, ls.skipped = false, 0
		return ls.oversize(size)
	}
	line := chunk
	if len(ls.long) > 0 {
		ls.long = append(ls.long, chunk...)
		line = ls.long
	}
	content := trimEnding(line)
	if len(content) > ls.max {
		ls.pass(line)
		ls.release()
		return ls.oversize(int64(len(content)))
	}
	if ls.onLine != nil {
		if ls.keepEnding {
			ls.onLine(line)
		} else {
			ls.onLine(content)
		}
	}
	ls.release()
	return false
}

func (ls *lineSplitter) oversize(size int64) bool {
	if ls.onOversize != nil {
		ls.onOversize(size)
	}
	return true
}

// pass hands a piece of an oversized line to onLine when passLong is set.
func (ls *lineSplitter) pass(piece []byte) {
	if ls.passLong && len(piece) > 0 && ls.onLine != nil {
		ls.onLine(piece)
	}
}

// release empties the side buffer, dropping it when it grew large.
func (ls *lineSplitter) release() {
	if cap(ls.long) > longBufferKeep {
		ls.long = nil
		return
	}
	ls.long = ls.long[:0]
}

func trimEnding(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line
}
