package cursor

import (
	"bufio"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/cursorkit/cursorkit/event"
)

const benchSession = "5f0c2b1e-9d3a-4c1f-8f7e-2a6b9c0d1e2f"

// bigStreamLines are assistant deltas as the simulator's big-stream
// scenario writes them (internal/agentsim, bigStream): chunk bytes of
// plain text each, a sequence number first so that no two are alike.
func bigStreamLines(n, chunk int) [][]byte {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 "
	filler := strings.Repeat(alphabet, chunk/len(alphabet)+1)[:chunk]
	prefix := `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"`
	suffix := `"}]},"session_id":"` + benchSession + `","timestamp_ms":`
	lines := make([][]byte, n)
	for i := range lines {
		text := strconv.Itoa(i) + ":"
		lines[i] = []byte(prefix + text + filler[:chunk-len(text)] + suffix + strconv.Itoa(1770823449274+i) + "}")
	}
	return lines
}

var benchInit = []byte(`{"type":"system","subtype":"init","session_id":"` + benchSession + `","model":"m","cwd":"/","permissionMode":"default","apiKeySource":"login"}`)

func startedDecoder(b *testing.B) *decoder {
	d := newDecoder(b, Turn{})
	if _, err := d.Feed(benchInit); err != nil {
		b.Fatal(err)
	}
	return d
}

// BenchmarkRunJSONBigStream is the in-process part of `cursorkit run
// --json` over the simulator's big stream: Feed (decode, protocol,
// dedupe) of 1 KiB-text assistant deltas, and each event written with
// event.NewEncoder into a buffered writer. MB/s is input line bytes (with
// their newline) per second.
func BenchmarkRunJSONBigStream(b *testing.B) {
	lines := bigStreamLines(1024, 1<<10)
	b.SetBytes(int64(len(lines[0]) + 1))
	b.ReportAllocs()
	d := startedDecoder(b)
	enc := event.NewEncoder(bufio.NewWriterSize(io.Discard, 64<<10))
	i := 0
	for b.Loop() {
		feedAndEncode(b, d, lines[i%len(lines)], enc)
		i++
	}
}

// feedAndEncode is `cursorkit run --json`'s work on one line: Feed, then
// every event it yields encoded with enc.
func feedAndEncode(b *testing.B, d *decoder, line []byte, enc *jsontext.Encoder) {
	evs, err := d.Feed(line)
	if err != nil {
		b.Fatal(err)
	}
	for _, ev := range evs {
		if err := ev.MarshalJSONTo(enc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFeedBigStream is Feed alone on the same lines.
func BenchmarkFeedBigStream(b *testing.B) {
	lines := bigStreamLines(1024, 1<<10)
	b.SetBytes(int64(len(lines[0]) + 1))
	b.ReportAllocs()
	d := startedDecoder(b)
	i := 0
	for b.Loop() {
		if _, err := d.Feed(lines[i%len(lines)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkEncodeText is the encoding alone: a 1 KiB text event written
// with event.NewEncoder. MB/s is output bytes per second.
func BenchmarkEncodeText(b *testing.B) {
	ev := event.Event{Type: event.TypeText, Text: string(bigStreamLines(1, 1<<10)[0][83 : 83+1<<10])}
	enc := event.NewEncoder(bufio.NewWriterSize(io.Discard, 64<<10))
	b.SetBytes(int64(len(`{"type":"text","text":""}`+"\n") + len(ev.Text)))
	b.ReportAllocs()
	for b.Loop() {
		if err := ev.MarshalJSONTo(enc); err != nil {
			b.Fatal(err)
		}
	}
}

// assistantLine is an assistant event carrying n bytes of prose with the
// occasional newline and quote to escape, like real model output.
func assistantLine(n int, i int) []byte {
	var sb strings.Builder
	for k := 0; sb.Len() < n; k++ {
		sb.WriteString("The quick brown fox jumps over the lazy dog, and then it naps for a while. ")
		if k%3 == 2 {
			sb.WriteString("It said \"done\".\n\n")
		}
	}
	return []byte(snap(fmt.Sprintf("mc-%d", i), sb.String()[:n]))
}

func benchSizes(b *testing.B, run func(b *testing.B, lines [2][]byte)) {
	for _, n := range []int{1 << 10, 64 << 10, 1 << 20} {
		lines := [2][]byte{assistantLine(n, 1), assistantLine(n, 2)}
		b.Run(fmt.Sprintf("text=%dKiB", n>>10), func(b *testing.B) {
			b.SetBytes(int64(len(lines[0])))
			b.ReportAllocs()
			run(b, lines)
		})
	}
}

// BenchmarkRunJSONAssistant is Feed and encoding of assistant snapshots
// of prose that needs escaping, at three sizes.
func BenchmarkRunJSONAssistant(b *testing.B) {
	benchSizes(b, func(b *testing.B, lines [2][]byte) {
		d := startedDecoder(b)
		enc := event.NewEncoder(bufio.NewWriterSize(io.Discard, 64<<10))
		i := 0
		for b.Loop() {
			feedAndEncode(b, d, lines[i&1], enc)
			i++
		}
	})
}

// BenchmarkUnmarshalAssistantBaseline is the floor the decoder builds on:
// encoding/json/v2 into a struct holding only what an assistant event
// needs.
func BenchmarkUnmarshalAssistantBaseline(b *testing.B) {
	type wire struct {
		Type    string `json:"type"`
		Message struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"message"`
		SessionID   string `json:"session_id"`
		ModelCallID string `json:"model_call_id"`
		TimestampMs *int64 `json:"timestamp_ms"`
	}
	benchSizes(b, func(b *testing.B, lines [2][]byte) {
		var w wire
		for b.Loop() {
			if err := json.Unmarshal(lines[0], &w); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkFeedDelta measures the small events of --stream-partial-output.
func BenchmarkFeedDelta(b *testing.B) {
	line := []byte(deltaLine("the next "))
	benchFeed(b, line)
}

// BenchmarkFeedToolCall measures a completed tool call carrying a file.
func BenchmarkFeedToolCall(b *testing.B) {
	content, _ := json.Marshal(strings.Repeat("package main\n\nfunc main() {}\n", 1000))
	line := []byte(`{"type":"tool_call","subtype":"completed","call_id":"toolu_1\nx","tool_call":{"readToolCall":{"args":{"path":"main.go"},"result":{"success":{"content":` +
		string(content) + `}}}},"session_id":"abc","model_call_id":"m1","timestamp_ms":1}`)
	benchFeed(b, line)
}

// BenchmarkFeedManyBlocks is a message of ten thousand small text blocks:
// decoding stays linear in the line.
func BenchmarkFeedManyBlocks(b *testing.B) {
	blocks := make([]string, 10000)
	for i := range blocks {
		blocks[i] = `{"type":"text","text":"word\n"}`
	}
	line := []byte(`{"type":"assistant","message":{"content":[` + strings.Join(blocks, ",") + `]},"timestamp_ms":1}`)
	benchFeed(b, line)
}

// BenchmarkFeedMalformed is the cost of a line read again by its type: a
// member of a kind its type does not use, which the one Unmarshal of any
// type refuses and the type's own struct accepts.
func BenchmarkFeedMalformed(b *testing.B) {
	line := bigStreamLines(1, 1<<10)[0]
	line = []byte(strings.Replace(string(line), `"session_id"`, `"cwd":1,"session_id"`, 1))
	benchFeed(b, line)
}

// benchFeed measures Feed alone on one line, fed again and again to a
// started Decoder.
func benchFeed(b *testing.B, line []byte) {
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	d := startedDecoder(b)
	for b.Loop() {
		if _, err := d.Feed(line); err != nil {
			b.Fatal(err)
		}
	}
}
