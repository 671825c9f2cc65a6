package supervise

import (
	"bytes"
	"io"
	"strings"
	"testing"

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
			lr := lineReader{rd: tc.input, buf: make([]byte, initialReadBuffer)}
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
	lr := lineReader{rd: emptyReader{}, buf: make([]byte, initialReadBuffer)}
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
	r := newTailRing(DefaultStderrTailBytes)
	assert.Zero(t, cap(r.buf), "nothing written, nothing allocated")
	_, _ = r.Write([]byte("warning: something\n"))
	assert.LessOrEqual(t, cap(r.buf), 256)
	for range DefaultStderrTailBytes / 100 {
		_, _ = r.Write(bytes.Repeat([]byte("e"), 99))
		_, _ = r.Write([]byte("\n"))
		assert.LessOrEqual(t, cap(r.buf), DefaultStderrTailBytes)
	}
	_, _ = r.Write(bytes.Repeat([]byte("z"), 200))
	assert.Equal(t, DefaultStderrTailBytes, len(r.buf))
	assert.True(t, strings.HasSuffix(r.String(), strings.Repeat("z", 200)))
	assert.Len(t, r.String(), DefaultStderrTailBytes)
}
