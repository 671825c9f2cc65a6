package modelapi

import (
	"encoding/json/jsontext"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"time"
)

type responsesRequest struct {
	Model string           `json:"model"`
	Input []responsesInput `json:"input"`
	Tools []responsesTool  `json:"tools"`
}

// responsesInput is one input item: a message, a tool call's output, or
// Codex's additional_tools item (tools offered in the input).
type responsesInput struct {
	Type   string          `json:"type"`
	Output jsontext.Value  `json:"output"`
	Tools  []responsesTool `json:"tools"`
}

// responsesTool is a tool, or a namespace of tools.
type responsesTool struct {
	Type  string          `json:"type"`
	Name  string          `json:"name"`
	Tools []responsesTool `json:"tools"`
}

func (in responsesRequest) modelName() string { return in.Model }

func (in responsesRequest) toolNames() []string {
	var names []string
	var walk func([]responsesTool)
	walk = func(ts []responsesTool) {
		for _, t := range ts {
			if t.Type == "namespace" {
				walk(t.Tools)
				continue
			}
			if t.Name != "" {
				names = append(names, t.Name)
			} else if t.Type != "" {
				names = append(names, t.Type) // a built-in tool: web_search, local_shell
			}
		}
	}
	walk(in.Tools)
	for _, item := range in.Input {
		walk(item.Tools)
	}
	return names
}

// toolResults reads function_call_output and custom_tool_call_output.
func (in responsesRequest) toolResults() []string {
	var out []string
	for _, item := range in.Input {
		if strings.HasSuffix(item.Type, "call_output") {
			out = append(out, textOf(item.Output))
		}
	}
	return out
}

// responsesDialect is the Responses API: response.created, per output
// item (reasoning, message, function or custom tool call) its
// output_item.added, deltas and output_item.done, then response.completed
// with the usage; each event carries its sequence_number.
type responsesDialect struct {
	model string
}

func (responsesDialect) fail(w http.ResponseWriter, r Reply) {
	e := apiErrorOf(r.Error)
	w.Header().Set("X-Request-Id", "req_standin_error")
	writeJSON(w, e.status, map[string]any{"error": map[string]any{
		"message": e.openaiMsg, "type": e.openaiType, "param": nil, "code": e.openaiCode}})
}

func (responsesDialect) exhausted(w http.ResponseWriter) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
		"message": "the stand-in's script has no reply left", "type": "invalid_request_error", "param": nil, "code": nil}})
}

func (d responsesDialect) play(st *sse, r Reply, n int) {
	rs := &responseStream{st: st, id: fmt.Sprintf("resp_standin_%d", n), model: d.model, created: time.Now().Unix()}
	rs.send("response.created", map[string]any{"response": rs.response("in_progress", []any{}, nil)})
	rs.send("response.in_progress", map[string]any{"response": rs.response("in_progress", []any{}, nil)})
	if r.Thinking != "" {
		rs.thinking(r.Thinking, n)
	}
	if len(r.Text) > 0 {
		rs.text(r.Text, n)
	}
	st.firstPart()
	for i, c := range r.Calls {
		rs.call(c, n, i)
	}
	reasoning := 0
	if r.Thinking != "" {
		reasoning = ThinkingTokens
	}
	usage := map[string]any{"input_tokens": InputTokens, "input_tokens_details": map[string]any{"cached_tokens": CachedTokens},
		"output_tokens": OutputTokens, "output_tokens_details": map[string]any{"reasoning_tokens": reasoning},
		"total_tokens": InputTokens + OutputTokens}
	rs.send("response.completed", map[string]any{"response": rs.response("completed", rs.output, usage)})
}

// responseStream is one response being played.
type responseStream struct {
	st      *sse
	id      string
	model   string
	created int64
	seq     int
	output  []any
}

func (rs *responseStream) send(typ string, v map[string]any) {
	v["type"], v["sequence_number"] = typ, rs.seq
	rs.seq++
	rs.st.event(typ, v)
}

func (rs *responseStream) response(status string, output []any, usage any) map[string]any {
	return map[string]any{"id": rs.id, "object": "response", "created_at": rs.created, "status": status,
		"model": rs.model, "output": output, "usage": usage}
}

// item plays one output item: added, the events between, done.
func (rs *responseStream) item(added, done map[string]any, between func(index int, itemID string)) {
	index := len(rs.output)
	itemID, _ := done["id"].(string)
	rs.send("response.output_item.added", map[string]any{"output_index": index, "item": added})
	between(index, itemID)
	rs.send("response.output_item.done", map[string]any{"output_index": index, "item": done})
	rs.output = append(rs.output, done)
}

func (rs *responseStream) thinking(thinking string, n int) {
	rid := fmt.Sprintf("rs_standin_%d", n)
	summary := []any{map[string]any{"type": "summary_text", "text": thinking}}
	rs.item(map[string]any{"id": rid, "type": "reasoning", "summary": []any{}},
		map[string]any{"id": rid, "type": "reasoning", "summary": summary, "encrypted_content": signature},
		func(index int, itemID string) {
			at := map[string]any{"item_id": itemID, "output_index": index, "summary_index": 0}
			rs.send("response.reasoning_summary_part.added", with(at, "part", map[string]any{"type": "summary_text", "text": ""}))
			rs.send("response.reasoning_summary_text.delta", with(at, "delta", thinking))
			rs.send("response.reasoning_summary_text.done", with(at, "text", thinking))
			rs.send("response.reasoning_summary_part.done", with(at, "part", map[string]any{"type": "summary_text", "text": thinking}))
		})
}

func (rs *responseStream) text(chunks []string, n int) {
	mid := fmt.Sprintf("msg_standin_%d", n)
	text := strings.Join(chunks, "")
	done := map[string]any{"id": mid, "type": "message", "status": "completed", "role": "assistant",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
	rs.item(map[string]any{"id": mid, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}, done,
		func(index int, itemID string) {
			at := map[string]any{"item_id": itemID, "output_index": index, "content_index": 0}
			rs.send("response.content_part.added", with(at, "part", map[string]any{"type": "output_text", "text": "", "annotations": []any{}}))
			for _, t := range chunks {
				rs.send("response.output_text.delta", with(at, "delta", t))
				rs.st.firstPart()
			}
			rs.send("response.output_text.done", with(at, "text", text))
			rs.send("response.content_part.done", with(at, "part", map[string]any{"type": "output_text", "text": text, "annotations": []any{}}))
		})
}

// call plays call i: a custom tool call for code, else a function call.
func (rs *responseStream) call(c Call, n, i int) {
	callID := fmt.Sprintf("call_standin_%d_%d", n, i)
	id, typ, member, value, event := fmt.Sprintf("fc_standin_%d_%d", n, i), "function_call", "arguments", string(c.Input), "response.function_call_arguments"
	if c.Code != "" {
		id, typ, member, value, event = fmt.Sprintf("ctc_standin_%d_%d", n, i), "custom_tool_call", "input", c.Code, "response.custom_tool_call_input"
	}
	rs.item(map[string]any{"id": id, "type": typ, "status": "in_progress", "call_id": callID, "name": c.Name, member: ""},
		map[string]any{"id": id, "type": typ, "status": "completed", "call_id": callID, "name": c.Name, member: value},
		func(index int, itemID string) {
			at := map[string]any{"item_id": itemID, "output_index": index}
			rs.send(event+".delta", with(at, "delta", value))
			rs.send(event+".done", with(at, member, value))
		})
}

// with returns a copy of base with one more member.
func with(base map[string]any, name string, value any) map[string]any {
	out := maps.Clone(base)
	out[name] = value
	return out
}
