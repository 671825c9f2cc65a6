package supervise

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lineAtATime returns one line (or what is left) per Read, like a child
// that writes an event now and then.
type lineAtATime struct{ rest []byte }

func (r *lineAtATime) Read(p []byte) (int, error) {
	if len(r.rest) == 0 {
		return 0, io.EOF
	}
	end := bytes.IndexByte(r.rest, '\n') + 1
	if end == 0 {
		end = len(r.rest)
	}
	n := copy(p, r.rest[:end])
	r.rest = r.rest[n:]
	return n, nil
}

// TestLineReaderGrowsOnlyWhenNeeded: a stream of occasional short lines
// keeps the small initial buffer; a line longer than it doubles the buffer
// until the line fits; reads that fill the buffer (a fast producer) double
// it up to the largest size.
func TestLineReaderGrowsOnlyWhenNeeded(t *testing.T) {
	short := strings.Repeat("s", 300) + "\n"
	long := strings.Repeat("l", 3*initialReadBuffer) + "\n"
	tests := []struct {
		name  string
		input io.Reader
		want  int
	}{
		{"occasional short lines", &lineAtATime{rest: []byte(strings.Repeat(short, 50))}, initialReadBuffer},
		{"one long line", &lineAtATime{rest: []byte(short + long + short)}, 4 * initialReadBuffer},
		{"fast producer", bytes.NewReader([]byte(strings.Repeat(short, 1000))), maxReadBuffer},
		{"line beyond the largest buffer", &lineAtATime{rest: []byte(strings.Repeat("x", 3*maxReadBuffer) + "\n")}, maxReadBuffer},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lr := newLineReader(tc.input)
			var got bytes.Buffer
			for {
				chunk, _, err := lr.readLine()
				got.Write(chunk)
				if err != nil {
					require.ErrorIs(t, err, io.EOF)
					break
				}
			}
			assert.Equal(t, tc.want, len(lr.buf))
			assert.Positive(t, got.Len())
		})
	}
}

// TestLineReaderNoProgress: a reader that keeps returning nothing is
// given up on, as bufio does.
func TestLineReaderNoProgress(t *testing.T) {
	lr := newLineReader(emptyReader{})
	chunk, full, err := lr.readLine()
	assert.Empty(t, chunk)
	assert.False(t, full)
	assert.ErrorIs(t, err, io.ErrNoProgress)
}

type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

// TestTailRingGrowsWithWhatIsWritten: a little stderr costs a little
// memory, however large the bound; past the bound the buffer is exactly
// the bound.
func TestTailRingGrowsWithWhatIsWritten(t *testing.T) {
	r := newTailRing(defaultStderrTailBytes)
	assert.Zero(t, cap(r.buf), "nothing written, nothing allocated")
	_, _ = r.Write([]byte("warning: something\n"))
	assert.LessOrEqual(t, cap(r.buf), 256)
	for range defaultStderrTailBytes / 100 {
		_, _ = r.Write(bytes.Repeat([]byte("e"), 99))
		_, _ = r.Write([]byte("\n"))
		assert.LessOrEqual(t, cap(r.buf), defaultStderrTailBytes)
	}
	_, _ = r.Write(bytes.Repeat([]byte("z"), 200))
	assert.Equal(t, defaultStderrTailBytes, len(r.buf))
	assert.True(t, strings.HasSuffix(r.String(), strings.Repeat("z", 200)))
	assert.Len(t, r.String(), defaultStderrTailBytes)
}

// TestHotStreamObserve: a stream is hot once hotBytes arrive within one
// hotWindow; bytes spread over longer than the window never add up.
func TestHotStreamObserve(t *testing.T) {
	type read struct {
		n   int
		at  time.Duration
		hot bool
	}
	quarter := hotBytes / 4
	tests := []struct {
		name  string
		reads []read
	}{
		{"burst within the window", []read{
			{quarter, 0, false}, {quarter, time.Millisecond, false},
			{quarter, 2 * time.Millisecond, false}, {quarter, 3 * time.Millisecond, true},
		}},
		{"one huge read", []read{{hotBytes, 5 * time.Second, true}}},
		{"just short of the threshold", []read{{hotBytes - 1, 0, false}, {0, hotWindow, false}}},
		{"window expires before the threshold", []read{
			{quarter, 0, false}, {quarter, hotWindow / 2, false}, {quarter, hotWindow, false},
			{quarter, hotWindow + time.Millisecond, false}, // a new window: 1 quarter
			{quarter, hotWindow + 2*time.Millisecond, false},
		}},
		{"quiet stream of small events", func() []read {
			var rs []read
			for i := range 10000 {
				rs = append(rs, read{1 << 10, time.Duration(i) * 10 * time.Millisecond, false})
			}
			return rs
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var h hotStream
			for i, r := range tc.reads {
				require.Equal(t, r.hot, h.observe(r.n, r.at), "read %d", i)
			}
		})
	}
}

// TestLineReaderGrowsForHotStream: a hot stream asks once for a larger
// pipe and its buffer then doubles up to the pipe's new capacity (at most
// hotReadBuffer); a refusal or a quiet stream keeps maxReadBuffer. The
// lines come out intact either way.
func TestLineReaderGrowsForHotStream(t *testing.T) {
	input := []byte(strings.Repeat(strings.Repeat("h", 1023)+"\n", 3*hotBytes/1024))
	tests := []struct {
		name      string
		granted   int           // the pipe's capacity grow reports
		tick      time.Duration // the clock's advance per read
		wantGrows int
		wantBuf   int
	}{
		{"hot stream, pipe enlarged", hotPipeSize, 0, 1, hotReadBuffer},
		{"hot stream, smaller pipe-max-size", 128 << 10, 0, 1, 128 << 10},
		{"hot stream, kernel refuses", 0, 0, 1, maxReadBuffer},
		{"larger pipe than the buffer's cap", 4 * hotPipeSize, 0, 1, hotReadBuffer},
		{"slow stream", hotPipeSize, time.Second, 0, maxReadBuffer},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var clock time.Duration
			grows := 0
			lr := newLineReader(bytes.NewReader(input))
			lr.growth = &pipeGrowth{
				grow: func(size int) int {
					grows++
					assert.Equal(t, hotPipeSize, size)
					return tc.granted
				},
				now: func() time.Duration { clock += tc.tick; return clock },
			}
			var got bytes.Buffer
			for {
				chunk, _, err := lr.readLine()
				got.Write(chunk)
				if err != nil {
					require.ErrorIs(t, err, io.EOF)
					break
				}
			}
			assert.Equal(t, tc.wantGrows, grows)
			assert.Equal(t, tc.wantBuf, len(lr.buf))
			assert.Equal(t, len(input), got.Len())
			assert.True(t, bytes.Equal(input, got.Bytes()))
		})
	}
}
