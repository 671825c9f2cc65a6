package supervise

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// splitAll runs a lineSplitter over input and returns what it delivered.
func splitAll(input []byte, max int, keep bool, wrap func(io.Reader) io.Reader) (lines []string, oversized []int64) {
	ls := &lineSplitter{
		max:        max,
		keepEnding: keep,
		onLine:     func(l []byte) { lines = append(lines, string(l)) },
		onOversize: func(n int64) { oversized = append(oversized, n) },
	}
	var r io.Reader = bytes.NewReader(input)
	if wrap != nil {
		r = wrap(r)
	}
	nl, no := ls.run(r)
	if int(nl) != len(lines) || int(no) != len(oversized) {
		panic("counts disagree with callbacks")
	}
	return lines, oversized
}

func TestLineSplitter(t *testing.T) {
	big := strings.Repeat("x", 10<<20) // a 10 MiB line, far beyond the read buffer
	tests := []struct {
		name      string
		input     string
		max       int
		keep      bool
		lines     []string
		oversized []int64
	}{
		{"empty input", "", 16, false, nil, nil},
		{"lf", "a\nb\n", 16, false, []string{"a", "b"}, nil},
		{"crlf", "a\r\nb\r\n", 16, false, []string{"a", "b"}, nil},
		{"only one cr trimmed", "a\r\r\n", 16, false, []string{"a\r"}, nil},
		{"lone cr inside kept", "a\rb\n", 16, false, []string{"a\rb"}, nil},
		{"empty lines", "\n\r\n\n", 16, false, []string{"", "", ""}, nil},
		{"unterminated last line", "a\nlast", 16, false, []string{"a", "last"}, nil},
		{"unterminated last line with cr", "a\nlast\r", 16, false, []string{"a", "last"}, nil},
		{"keep endings", "a\r\nb\nc", 16, true, []string{"a\r\n", "b\n", "c"}, nil},
		{"exactly max", "abcd\n", 4, false, []string{"abcd"}, nil},
		{"exactly max with crlf", "abcd\r\n", 4, false, []string{"abcd"}, nil},
		{"one over max skipped", "abcde\nok\n", 4, false, []string{"ok"}, []int64{5}},
		{"oversized crlf size excludes ending", "abcdef\r\nok\r\n", 4, false, []string{"ok"}, []int64{6}},
		{"oversized last line", "ok\nabcdefgh", 4, false, []string{"ok"}, []int64{8}},
		{"10 MiB line", "a\n" + big + "\r\nz", 16 << 20, false, []string{"a", big, "z"}, nil},
		{"10 MiB line over max skipped, draining continues", big + "\nafter\n", 1 << 20, false, []string{"after"}, []int64{10 << 20}},
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    nil,
		"one byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
	}
	for _, tt := range tests {
		for rname, wrap := range readers {
			if rname == "one byte" && len(tt.input) > 1<<20 {
				continue // the same logic, only slower
			}
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				lines, oversized := splitAll([]byte(tt.input), tt.max, tt.keep, wrap)
				require.Equal(t, len(tt.lines), len(lines))
				for i := range lines {
					assert.True(t, tt.lines[i] == lines[i], "line %d differs (len %d vs %d)", i, len(tt.lines[i]), len(lines[i]))
				}
				assert.Equal(t, tt.oversized, oversized)
			})
		}
	}
}

func TestLineSplitterStopsOnReadError(t *testing.T) {
	r := io.MultiReader(strings.NewReader("a\npartial"), iotest.ErrReader(io.ErrClosedPipe))
	var lines []string
	ls := &lineSplitter{max: 16, onLine: func(l []byte) { lines = append(lines, string(l)) }}
	n, _ := ls.run(r)
	assert.Equal(t, int64(2), n)
	assert.Equal(t, []string{"a", "partial"}, lines, "what arrived before a closed pipe is still delivered")
}

// TestLineSplitterDropsTheLineAStoppedChildCutShort: once the child is
// being stopped, an unterminated last line is one it never finished (the
// kill came mid-write): it is dropped, unless output passes through
// byte-for-byte. A child that exits by itself keeps its last line.
func TestLineSplitterDropsTheLineAStoppedChildCutShort(t *testing.T) {
	tests := []struct {
		name     string
		stopped  bool
		passLong bool
		want     []string
	}{
		{"exited by itself", false, false, []string{"a", `{"type":"assi`}},
		{"stopped", true, false, []string{"a"}},
		{"stopped, passing through", true, true, []string{"a\n", `{"type":"assi`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var lines []string
			ls := &lineSplitter{max: 64, keepEnding: tt.passLong, passLong: tt.passLong,
				onLine:   func(l []byte) { lines = append(lines, string(l)) },
				cutShort: func() bool { return tt.stopped }}
			got, _ := ls.run(strings.NewReader("a\n" + `{"type":"assi`))
			assert.Equal(t, tt.want, lines)
			assert.Equal(t, int64(len(tt.want)), got)
		})
	}
}

func TestLineSplitterOnDrained(t *testing.T) {
	// HalfReader hands out half of what is asked, so some lines end a read
	// and some do not; OnDrained must fire exactly when nothing is left
	// buffered, and after the last line.
	var events []string
	ls := &lineSplitter{
		max:       16,
		onLine:    func(l []byte) { events = append(events, string(l)) },
		onDrained: func() { events = append(events, "|") },
	}
	ls.run(strings.NewReader("a\nb\nc"))
	assert.Equal(t, []string{"a", "b", "c", "|"}, events, "one read holds everything")

	events = nil
	ls.run(io.MultiReader(strings.NewReader("a\nb\n"), strings.NewReader("c\n")))
	assert.Equal(t, []string{"a", "b", "|", "c", "|"}, events)
}

func TestLineSplitterNoAllocationPerLine(t *testing.T) {
	line := []byte(strings.Repeat("y", 499) + "\n")
	input := bytes.Repeat(line, 1000)
	r := bytes.NewReader(input)
	ls := &lineSplitter{max: defaultMaxLineBytes, onLine: func([]byte) {}}
	allocs := testing.AllocsPerRun(20, func() {
		r.Reset(input)
		ls.run(r)
	})
	// The read buffer and its doublings up to the largest, per run;
	// nothing per line.
	assert.LessOrEqual(t, allocs, 7.0)
}

// FuzzLineSplitter checks the splitter against a plain reference: split on
// "\n", trim one "\r", drop an empty unterminated tail, and sort lines by
// length against max.
func FuzzLineSplitter(f *testing.F) {
	f.Add([]byte("a\r\nb\n\nlast"), 4)
	f.Add([]byte("abcdefgh\r\nok"), 3)
	f.Add([]byte("\r\r\n\r"), 1)
	f.Fuzz(func(t *testing.T, input []byte, max int) {
		if max <= 0 || max > 1<<16 {
			return
		}
		var wantLines []string
		var wantOversized []int64
		parts := bytes.Split(input, []byte{'\n'})
		if len(parts[len(parts)-1]) == 0 {
			parts = parts[:len(parts)-1]
		}
		for _, p := range parts {
			p = bytes.TrimSuffix(p, []byte{'\r'})
			if len(p) > max {
				wantOversized = append(wantOversized, int64(len(p)))
				continue
			}
			wantLines = append(wantLines, string(p))
		}
		lines, oversized := splitAll(input, max, false, iotest.HalfReader)
		assert.Equal(t, wantLines, lines)
		assert.Equal(t, wantOversized, oversized)

		var joined []byte
		kept, _ := splitAll(input, len(input)+2, true, nil)
		for _, l := range kept {
			joined = append(joined, l...)
		}
		assert.Equal(t, string(input), string(joined), "KeepLineEndings reproduces the stream")
	})
}

func BenchmarkLineSplitter(b *testing.B) {
	line := []byte(strings.Repeat("y", 499) + "\n")
	input := bytes.Repeat(line, 2000)
	r := bytes.NewReader(input)
	ls := &lineSplitter{max: defaultMaxLineBytes, onLine: func([]byte) {}}
	b.SetBytes(int64(len(input)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(input)
		ls.run(r)
	}
}

// TestLineSplitterPassOversized: with passLong every byte reaches onLine,
// oversized lines in pieces, so a pass-through reproduces the stream.
func TestLineSplitterPassOversized(t *testing.T) {
	big := strings.Repeat("y", 3<<20) // beyond max and beyond the read buffer
	tests := []struct {
		name      string
		input     string
		max       int
		oversized []int64
	}{
		{"short lines untouched", "a\nb\r\nc", 16, nil},
		{"one over max", "abcde\nok\n", 4, []int64{5}},
		{"oversized crlf", "abcdef\r\nok\r\n", 4, []int64{6}},
		{"oversized last line without newline", "ok\nabcdefgh", 4, []int64{8}},
		{"a line beyond the read buffer", "a\n" + big + "\r\nz\n", 1 << 20, []int64{3 << 20}},
	}
	for _, tt := range tests {
		for rname, wrap := range map[string]func(io.Reader) io.Reader{"whole": nil, "half": iotest.HalfReader} {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				var out bytes.Buffer
				var oversized []int64
				ls := &lineSplitter{
					max: tt.max, keepEnding: true, passLong: true,
					onLine:     func(l []byte) { out.Write(l) },
					onOversize: func(n int64) { oversized = append(oversized, n) },
				}
				var r io.Reader = strings.NewReader(tt.input)
				if wrap != nil {
					r = wrap(r)
				}
				_, n := ls.run(r)
				assert.True(t, out.String() == tt.input, "output differs from input (len %d vs %d)", out.Len(), len(tt.input))
				assert.Equal(t, tt.oversized, oversized)
				assert.Equal(t, int64(len(tt.oversized)), n)
			})
		}
	}
}
