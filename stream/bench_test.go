package stream

import (
	"encoding/json"
	"fmt"
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
