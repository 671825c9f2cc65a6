package stream

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

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
	text := sb.String()[:n]
	line, _ := json.Marshal(map[string]any{
		"type":          "assistant",
		"message":       map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}},
		"session_id":    "5f0c2b1e-9d3a-4c1f-8f7e-2a6b9c0d1e2f",
		"model_call_id": fmt.Sprintf("mc-%d", i),
		"timestamp_ms":  1770823449274 + i,
	})
	return line
}

func benchSizes(b *testing.B, run func(b *testing.B, line []byte)) {
	for _, n := range []int{1 << 10, 64 << 10, 1 << 20} {
		line := assistantLine(n, 1)
		b.Run(fmt.Sprintf("text=%dKiB", n>>10), func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			run(b, line)
		})
	}
}

// BenchmarkDecodeAssistant measures Decode on assistant events (MB/s is
// line bytes per second).
func BenchmarkDecodeAssistant(b *testing.B) {
	benchSizes(b, func(b *testing.B, line []byte) {
		for b.Loop() {
			if _, err := Decode(line); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDecodeAssistantEncodingJSON is the baseline Decode replaces:
// encoding/json into a struct holding only the fields an assistant event needs.
func BenchmarkDecodeAssistantEncodingJSON(b *testing.B) {
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
	benchSizes(b, func(b *testing.B, line []byte) {
		for b.Loop() {
			var w wire
			if err := json.Unmarshal(line, &w); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTurnAssistantJSON is the whole `run --json` path for assistant
// events: Feed (decode, protocol, dedupe) and AppendJSON of the outputs.
func BenchmarkTurnAssistantJSON(b *testing.B) {
	policy, _ := NewPolicy(ModeDefault)
	initLine := []byte(`{"type":"system","subtype":"init","session_id":"s","model":"m","cwd":"/","permissionMode":"default","apiKeySource":"login"}`)
	benchSizes(b, func(b *testing.B, line []byte) {
		t := NewTurn(policy)
		if _, err := t.Feed(initLine); err != nil {
			b.Fatal(err)
		}
		lines := [2][]byte{line, assistantLine(len(line), 2)}
		var buf []byte
		i := 0
		for b.Loop() {
			outs, err := t.Feed(lines[i&1])
			if err != nil {
				b.Fatal(err)
			}
			i++
			for _, o := range outs {
				buf = append(o.AppendJSON(buf[:0]), '\n')
			}
			if t.text.said.len() > 64<<20 {
				// A Turn keeps what the agent said; start over every 64 MiB
				// so long runs measure steady appends, not one huge buffer.
				t = NewTurn(policy)
				if _, err := t.Feed(initLine); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkDecodeDelta measures the small events of --stream-partial-output.
func BenchmarkDecodeDelta(b *testing.B) {
	line := []byte(deltaLine("the next "))
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(line); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeToolCall measures a completed tool call carrying a file.
func BenchmarkDecodeToolCall(b *testing.B) {
	content, _ := json.Marshal(strings.Repeat("package main\n\nfunc main() {}\n", 1000))
	line := []byte(`{"type":"tool_call","subtype":"completed","call_id":"toolu_1\nx","tool_call":{"readToolCall":{"args":{"path":"main.go"},"result":{"success":{"content":` +
		string(content) + `}}}},"session_id":"abc","model_call_id":"m1","timestamp_ms":1}`)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(line); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeManyBlocks is a message of ten thousand small text blocks:
// decoding stays linear in the line.
func BenchmarkDecodeManyBlocks(b *testing.B) {
	blocks := make([]string, 10000)
	for i := range blocks {
		blocks[i] = `{"type":"text","text":"word\n"}`
	}
	line := []byte(`{"type":"assistant","message":{"content":[` + strings.Join(blocks, ",") + `]}}`)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(line); err != nil {
			b.Fatal(err)
		}
	}
}

// bigStreamLines are assistant deltas shaped like the simulator's
// big-stream scenario (P2): about 1 KiB of plain text each, distinct.
func bigStreamLines(n int) [][]byte {
	const prefix = `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"`
	const suffix = `"}]},"session_id":"5f0c2b1e-9d3a-4c1f-8f7e-2a6b9c0d1e2f","timestamp_ms":1770823449274}`
	filler := strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789 ", 1024/37+1)[:1024]
	lines := make([][]byte, n)
	for i := range lines {
		text := fmt.Sprintf("%d:", i)
		lines[i] = []byte(prefix + text + filler[len(text):] + suffix)
	}
	return lines
}

// BenchmarkTurnBigStream is P2's in-process hot path: Feed of simulator
// shaped assistant deltas and `run --json` encoding of the outputs into a
// buffered writer (MB/s is input line bytes per second).
func BenchmarkTurnBigStream(b *testing.B) {
	policy, _ := NewPolicy(ModeDefault)
	initLine := []byte(`{"type":"system","subtype":"init","session_id":"5f0c2b1e-9d3a-4c1f-8f7e-2a6b9c0d1e2f","model":"m","cwd":"/","permissionMode":"default","apiKeySource":"login"}`)
	lines := bigStreamLines(1024)
	b.SetBytes(int64(len(lines[0]) + 1))
	b.ReportAllocs()
	t := NewTurn(policy)
	t.ReuseText() // as run does
	if _, err := t.Feed(initLine); err != nil {
		b.Fatal(err)
	}
	out := bufio.NewWriterSize(io.Discard, 64<<10)
	var buf []byte
	i := 0
	for b.Loop() {
		outs, err := t.Feed(lines[i%len(lines)])
		if err != nil {
			b.Fatal(err)
		}
		i++
		for _, o := range outs {
			buf = append(o.AppendJSON(buf[:0]), '\n')
			_, _ = out.Write(buf)
		}
	}
}
