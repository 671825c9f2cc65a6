package modelapi

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

type anthropicRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Content jsontext.Value `json:"content"` // a string or content blocks
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

func (in anthropicRequest) modelName() string { return in.Model }

func (in anthropicRequest) toolNames() []string {
	var names []string
	for _, t := range in.Tools {
		names = append(names, t.Name)
	}
	return names
}

func (in anthropicRequest) toolResults() []string {
	var out []string
	for _, m := range in.Messages {
		var blocks []struct {
			Type    string         `json:"type"`
			Content jsontext.Value `json:"content"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				out = append(out, textOf(b.Content))
			}
		}
	}
	return out
}

// textOf is a tool result's text: a JSON string's value, an array of
// blocks' text members joined, else the JSON itself.
func textOf(v jsontext.Value) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(v, &blocks) == nil {
		var b strings.Builder
		for _, t := range blocks {
			b.WriteString(t.Text)
		}
		return b.String()
	}
	return string(v)
}

// anthropicDialect is the Messages API: server-sent events message_start,
// content_block_start/delta/stop per block (thinking, text, tool_use),
// message_delta with the stop reason and the output usage, message_stop.
type anthropicDialect struct {
	model  string
	stream bool
}

func (anthropicDialect) fail(w http.ResponseWriter, r Reply) {
	w.Header().Set("Request-Id", "req_standin_error")
	if r.Error == ErrServer || r.Error == ErrOverloaded {
		w.Header().Set("X-Should-Retry", "true")
	}
	e := apiErrorOf(r.Error)
	if r.Error == ErrOverloaded {
		e.status = 529
	}
	writeJSON(w, e.status, map[string]any{"type": "error", "error": map[string]any{"type": e.anthropicType, "message": e.anthropicMsg}})
}

func (anthropicDialect) exhausted(w http.ResponseWriter) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"type": "error",
		"error": map[string]any{"type": "invalid_request_error", "message": "the stand-in's script has no reply left"}})
}

// anthropicUsage is message_start's usage, with the whole input.
func anthropicUsage(output int) map[string]any {
	return map[string]any{"input_tokens": InputTokens - CachedTokens, "cache_creation_input_tokens": 0,
		"cache_read_input_tokens": CachedTokens, "output_tokens": output}
}

// signature is the opaque signature a thinking block ends with.
const signature = "c3RhbmRpbi1zaWduYXR1cmU="

func (d anthropicDialect) play(st *sse, r Reply, n int) {
	id := fmt.Sprintf("msg_standin_%d", n)
	stop := "end_turn"
	if len(r.Calls) > 0 {
		stop = "tool_use"
	}
	if !d.stream {
		d.whole(st, r, n, id, stop)
		return
	}
	st.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": d.model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": anthropicUsage(1)}})
	st.event("ping", map[string]any{"type": "ping"})
	index := 0
	block := func(start map[string]any, deltas []map[string]any) {
		st.event("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": start})
		for _, delta := range deltas {
			st.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": delta})
			if start["type"] == "text" {
				st.firstPart()
			}
		}
		st.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	if r.Thinking != "" {
		block(map[string]any{"type": "thinking", "thinking": "", "signature": ""}, []map[string]any{
			{"type": "thinking_delta", "thinking": r.Thinking},
			{"type": "signature_delta", "signature": signature},
		})
	}
	if len(r.Text) > 0 {
		var deltas []map[string]any
		for _, t := range r.Text {
			deltas = append(deltas, map[string]any{"type": "text_delta", "text": t})
		}
		block(map[string]any{"type": "text", "text": ""}, deltas)
	}
	st.firstPart()
	for i, c := range r.Calls {
		input := string(c.Input)
		half := len(input) / 2
		for half > 0 && !utf8.RuneStart(input[half]) {
			half-- // each part stays UTF-8, as a JSON string must
		}
		block(map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_standin_%d_%d", n, i), "name": c.Name, "input": map[string]any{}},
			[]map[string]any{
				{"type": "input_json_delta", "partial_json": input[:half]},
				{"type": "input_json_delta", "partial_json": input[half:]},
			})
	}
	st.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": OutputTokens}})
	st.event("message_stop", map[string]any{"type": "message_stop"})
}

// whole answers a request without stream: true.
func (d anthropicDialect) whole(st *sse, r Reply, n int, id, stop string) {
	var content []any
	if r.Thinking != "" {
		content = append(content, map[string]any{"type": "thinking", "thinking": r.Thinking, "signature": signature})
	}
	if len(r.Text) > 0 {
		content = append(content, map[string]any{"type": "text", "text": strings.Join(r.Text, "")})
	}
	for i, c := range r.Calls {
		content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_standin_%d_%d", n, i),
			"name": c.Name, "input": c.Input})
	}
	writeJSON(st.w, http.StatusOK, map[string]any{"id": id, "type": "message", "role": "assistant", "model": d.model,
		"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": anthropicUsage(OutputTokens)})
}
