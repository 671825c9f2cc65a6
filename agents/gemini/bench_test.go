package gemini_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/gemini"
	"github.com/cursorkit/cursorkit/turn"
)

// benchTurn is turn-tools.jsonl as BenchmarkAgentStream (package bench)
// plays it: its first two lines (init, the prompt's echo), its middle
// lines copies times with each tool_id made distinct per copy, its result.
func benchTurn(b *testing.B, copies int) [][]byte {
	b.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "turn-tools.jsonl"))
	require.NoError(b, err)
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	req := append([][]byte{}, lines[:2]...)
	for k := range copies {
		for _, l := range lines[2 : len(lines)-1] {
			req = append(req, bytes.ReplaceAll(l, []byte(`"tool_id":"`), []byte(`"tool_id":"`+strconv.Itoa(k)+"-")))
		}
	}
	return append(req, lines[len(lines)-1])
}

// BenchmarkDecoder is Feed alone over a turn of gemini's stream-json
// (benchTurn, 1000 copies of the middle lines), in write mode. MB/s is
// input line bytes (with their newline) per second.
func BenchmarkDecoder(b *testing.B) {
	req := benchTurn(b, 1000)
	var size int64
	for _, l := range req {
		size += int64(len(l) + 1)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	buf := make([]byte, 0, 4096)
	for b.Loop() {
		d, err := gemini.NewDecoder(gemini.Turn{Mode: turn.ModeWrite})
		require.NoError(b, err)
		for _, l := range req {
			buf = append(append(buf[:0], l...), '\n')
			if _, err := d.Feed(buf); err != nil {
				b.Fatal(err)
			}
		}
		require.True(b, d.Done())
	}
}
