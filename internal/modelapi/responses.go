package modelapi

import (
	"encoding/json/jsontext"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// responsesRequest is what the stand-in reads of a Responses request.
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

// toolResults returns the output of every function_call_output and
// custom_tool_call_output item.
func (in responsesRequest) toolResults() []string {
	var out []string
	for _, item := range in.Input {
		if strings.HasSuffix(item.Type, "call_output") {
			out = append(out, textOf(item.Output))
		}
	}
	return out
}

// responsesDialect is the Responses API: response.created, an
// output_item.added ... output_item.done run per output item (reasoning,
// message, function or custom tool call) with its deltas, and
// response.completed with the usage. Each event carries its
// sequence_number.
type responsesDialect struct {
	model string
}

func (responsesDialect) fail(w http.ResponseWriter, r Reply) {
	typ, code, msg := "server_error", "server_error", "The server had an error while processing your request."
	switch r.Error {
	case ErrRateLimit:
		typ, code, msg = "requests", "rate_limit_exceeded", "Rate limit reached for requests. Please try again in 1s."
	case ErrUnauthorized:
		typ, code, msg = "invalid_request_error", "invalid_api_key", "Incorrect API key provided."
	case ErrForbidden:
		typ, code, msg = "invalid_request_error", "unsupported_country_region_territory", "Country, region, or territory not supported"
	case ErrOverloaded:
		typ, code, msg = "server_error", "server_is_overloaded", "The server is overloaded. Please try again later."
	}
	w.Header().Set("X-Request-Id", "req_standin_error")
	writeJSON(w, httpStatus(r.Error, Responses), map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "param": nil, "code": code}})
}

func (responsesDialect) exhausted(w http.ResponseWriter) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
		"message": "the stand-in's script has no reply left", "type": "invalid_request_error", "param": nil, "code": nil}})
}

func (d responsesDialect) play(st *sse, r Reply, n int) {
	seq := 0
	send := func(typ string, v map[string]any) {
		v["type"], v["sequence_number"] = typ, seq
		seq++
		st.event(typ, v)
	}
	id := fmt.Sprintf("resp_standin_%d", n)
	created := time.Now().Unix()
	response := func(status string, output []any, usage any) map[string]any {
		return map[string]any{"id": id, "object": "response", "created_at": created, "status": status,
			"model": d.model, "output": output, "usage": usage}
	}
	send("response.created", map[string]any{"response": response("in_progress", []any{}, nil)})
	send("response.in_progress", map[string]any{"response": response("in_progress", []any{}, nil)})
	var output []any
	item := func(added, done map[string]any, between func(index int, itemID string)) {
		index := len(output)
		itemID, _ := done["id"].(string)
		send("response.output_item.added", map[string]any{"output_index": index, "item": added})
		between(index, itemID)
		send("response.output_item.done", map[string]any{"output_index": index, "item": done})
		output = append(output, done)
	}
	if r.Thinking != "" {
		rid := fmt.Sprintf("rs_standin_%d", n)
		summary := []any{map[string]any{"type": "summary_text", "text": r.Thinking}}
		item(map[string]any{"id": rid, "type": "reasoning", "summary": []any{}},
			map[string]any{"id": rid, "type": "reasoning", "summary": summary, "encrypted_content": signature},
			func(index int, itemID string) {
				part := map[string]any{"type": "summary_text", "text": ""}
				send("response.reasoning_summary_part.added", map[string]any{"item_id": itemID, "output_index": index, "summary_index": 0, "part": part})
				send("response.reasoning_summary_text.delta", map[string]any{"item_id": itemID, "output_index": index, "summary_index": 0, "delta": r.Thinking})
				send("response.reasoning_summary_text.done", map[string]any{"item_id": itemID, "output_index": index, "summary_index": 0, "text": r.Thinking})
				send("response.reasoning_summary_part.done", map[string]any{"item_id": itemID, "output_index": index, "summary_index": 0,
					"part": map[string]any{"type": "summary_text", "text": r.Thinking}})
			})
	}
	if len(r.Text) > 0 {
		mid := fmt.Sprintf("msg_standin_%d", n)
		text := strings.Join(r.Text, "")
		done := map[string]any{"id": mid, "type": "message", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
		item(map[string]any{"id": mid, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}, done,
			func(index int, itemID string) {
				at := map[string]any{"item_id": itemID, "output_index": index, "content_index": 0}
				send("response.content_part.added", with(at, "part", map[string]any{"type": "output_text", "text": "", "annotations": []any{}}))
				for _, t := range r.Text {
					send("response.output_text.delta", with(at, "delta", t))
					st.firstPart()
				}
				send("response.output_text.done", with(at, "text", text))
				send("response.content_part.done", with(at, "part", map[string]any{"type": "output_text", "text": text, "annotations": []any{}}))
			})
	}
	st.firstPart()
	for i, c := range r.Calls {
		callID := fmt.Sprintf("call_standin_%d_%d", n, i)
		if c.Code != "" {
			cid := fmt.Sprintf("ctc_standin_%d_%d", n, i)
			item(map[string]any{"id": cid, "type": "custom_tool_call", "status": "in_progress", "call_id": callID, "name": c.Name, "input": ""},
				map[string]any{"id": cid, "type": "custom_tool_call", "status": "completed", "call_id": callID, "name": c.Name, "input": c.Code},
				func(index int, itemID string) {
					at := map[string]any{"item_id": itemID, "output_index": index}
					send("response.custom_tool_call_input.delta", with(at, "delta", c.Code))
					send("response.custom_tool_call_input.done", with(at, "input", c.Code))
				})
			continue
		}
		fid := fmt.Sprintf("fc_standin_%d_%d", n, i)
		args := string(c.Input)
		item(map[string]any{"id": fid, "type": "function_call", "status": "in_progress", "call_id": callID, "name": c.Name, "arguments": ""},
			map[string]any{"id": fid, "type": "function_call", "status": "completed", "call_id": callID, "name": c.Name, "arguments": args},
			func(index int, itemID string) {
				at := map[string]any{"item_id": itemID, "output_index": index}
				send("response.function_call_arguments.delta", with(at, "delta", args))
				send("response.function_call_arguments.done", with(at, "arguments", args))
			})
	}
	reasoning := 0
	if r.Thinking != "" {
		reasoning = ThinkingTokens
	}
	usage := map[string]any{"input_tokens": InputTokens, "input_tokens_details": map[string]any{"cached_tokens": CachedTokens},
		"output_tokens": OutputTokens, "output_tokens_details": map[string]any{"reasoning_tokens": reasoning},
		"total_tokens": InputTokens + OutputTokens}
	send("response.completed", map[string]any{"response": response("completed", output, usage)})
}

// with returns a copy of base with one more member.
func with(base map[string]any, name string, value any) map[string]any {
	out := make(map[string]any, len(base)+1)
	for k, v := range base {
		out[k] = v
	}
	out[name] = value
	return out
}
