package codex_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/codex"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/turn"
)

// BenchmarkDecoder is Feed over success.jsonl's middle lines repeated, the
// item ids made distinct per copy as BenchmarkAgentStream makes them; a
// new Decoder every 4096 copies. MB/s is input line bytes per second.
func BenchmarkDecoder(b *testing.B) {
	data, err := os.ReadFile("testdata/success.jsonl")
	require.NoError(b, err)
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	head, middle := all[:2], all[2:len(all)-1]
	var lines [][]byte
	size := 0
	for k := range 4096 {
		for _, l := range middle {
			l = strings.ReplaceAll(l, `"item_`, `"item_`+strconv.Itoa(k)+"-")
			lines = append(lines, []byte(l))
			size += len(l) + 1
		}
	}
	newDecoder := func() turn.Decoder {
		d, err := codex.NewDecoder(codex.Turn{Mode: turn.ModeWrite})
		require.NoError(b, err)
		for _, l := range head {
			_, err := d.Feed([]byte(l))
			require.NoError(b, err)
		}
		return d
	}
	b.SetBytes(int64(size / len(lines)))
	b.ReportAllocs()
	d := newDecoder()
	i := 0
	var evs []event.Event
	for b.Loop() {
		if i == len(lines) {
			d, i = newDecoder(), 0
		}
		if evs, err = d.Feed(lines[i]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	_ = evs
}
