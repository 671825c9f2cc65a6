package modelapi

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"fmt"
	"net/http"
	"strings"
)

// geminiRequest is a (stream)generateContent request; the path names the
// model.
type geminiRequest struct {
	model    string
	Contents []struct {
		Parts []struct {
			FunctionResponse *struct {
				Response jsontext.Value `json:"response"`
			} `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseJSONSchema jsontext.Value `json:"responseJsonSchema"`
		ResponseSchema     jsontext.Value `json:"responseSchema"`
	} `json:"generationConfig"`
}

func (in geminiRequest) modelName() string { return in.model }

func (in geminiRequest) toolNames() []string {
	var names []string
	for _, t := range in.Tools {
		for _, f := range t.FunctionDeclarations {
			names = append(names, f.Name)
		}
	}
	return names
}

// toolResults reads each functionResponse's "output" (Gemini CLI's
// shape), else its JSON.
func (in geminiRequest) toolResults() []string {
	var out []string
	for _, c := range in.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse == nil {
				continue
			}
			var r struct {
				Output *string `json:"output"`
			}
			if json.Unmarshal(p.FunctionResponse.Response, &r) == nil && r.Output != nil {
				out = append(out, *r.Output)
			} else {
				out = append(out, string(p.FunctionResponse.Response))
			}
		}
	}
	return out
}

// sideAnswer answers a generateContent request beside the turn (Gemini
// CLI's model-routing classifier and other utility calls, which ask for
// JSON in a schema) with the plainest value of the schema: a number is 10
// (a low complexity score routes to the fast model), an enumeration its
// first value.
func (in geminiRequest) sideAnswer() map[string]any {
	schema := in.GenerationConfig.ResponseJSONSchema
	if schema == nil {
		schema = in.GenerationConfig.ResponseSchema
	}
	text := "OK"
	if schema != nil {
		var s jsonSchema
		if json.Unmarshal(schema, &s) == nil {
			b, _ := json.Marshal(s.sample())
			text = string(b)
		}
	}
	chunk := geminiChunk(in.model, "standin-side", []any{map[string]any{"text": text}}, true, false)
	// A utility call is small beside the turn's own (no tools, no
	// system prompt of the agent's).
	chunk["usageMetadata"] = map[string]any{"promptTokenCount": SideInputTokens, "candidatesTokenCount": SideOutputTokens,
		"totalTokenCount": SideInputTokens + SideOutputTokens}
	return chunk
}

// jsonSchema is what sideAnswer reads of a JSON schema (or the Gemini
// API's OpenAPI subset, with upper-case types).
type jsonSchema struct {
	Type       string                `json:"type"`
	Enum       []any                 `json:"enum"`
	Properties map[string]jsonSchema `json:"properties"`
	Items      *jsonSchema           `json:"items"`
}

func (s jsonSchema) sample() any {
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	switch strings.ToLower(s.Type) {
	case "object":
		out := map[string]any{}
		for name, p := range s.Properties {
			out[name] = p.sample()
		}
		return out
	case "array":
		if s.Items != nil {
			return []any{s.Items.sample()}
		}
		return []any{}
	case "integer", "number":
		return 10
	case "boolean":
		return false
	}
	return "the stand-in's answer"
}

// geminiDialect is streamGenerateContent?alt=sse: unnamed events, each a
// GenerateContentResponse with one candidate's new parts.
type geminiDialect struct {
	model string
}

func (geminiDialect) fail(w http.ResponseWriter, r Reply) {
	e := apiErrorOf(r.Error)
	writeGeminiError(w, e.status, e.geminiStatus, e.geminiMsg)
}

func (geminiDialect) exhausted(w http.ResponseWriter) {
	writeGeminiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "the stand-in's script has no reply left")
}

func writeGeminiError(w http.ResponseWriter, code int, status, msg string) {
	writeJSON(w, code, map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}})
}

// geminiChunk is one GenerateContentResponse with parts; the last has the
// finish reason and the usage.
func geminiChunk(model, id string, parts []any, last, thought bool) map[string]any {
	candidate := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	chunk := map[string]any{"candidates": []any{candidate}, "modelVersion": model, "responseId": id}
	if last {
		candidate["finishReason"] = "STOP"
		usage := map[string]any{"promptTokenCount": InputTokens, "cachedContentTokenCount": CachedTokens,
			"candidatesTokenCount": OutputTokens, "totalTokenCount": InputTokens + OutputTokens}
		if thought {
			usage["thoughtsTokenCount"] = ThinkingTokens
			usage["totalTokenCount"] = InputTokens + OutputTokens + ThinkingTokens
		}
		chunk["usageMetadata"] = usage
	}
	return chunk
}

func (d geminiDialect) play(st *sse, r Reply, n int) {
	var chunks [][]any
	if r.Thinking != "" {
		chunks = append(chunks, []any{map[string]any{"text": r.Thinking, "thought": true}})
	}
	for _, t := range r.Text {
		chunks = append(chunks, []any{map[string]any{"text": t}})
	}
	var calls []any
	for i, c := range r.Calls {
		calls = append(calls, map[string]any{"functionCall": map[string]any{
			"id": fmt.Sprintf("call_standin_%d_%d", n, i), "name": c.Name, "args": c.Input}})
	}
	if len(calls) > 0 {
		chunks = append(chunks, calls)
	}
	// The first part ends with the first text chunk, or the first chunk.
	first := 0
	if r.Thinking != "" && len(r.Text) > 0 {
		first = 1
	}
	for i, parts := range chunks {
		st.event("", geminiChunk(d.model, fmt.Sprintf("standin-%d", n), parts, i == len(chunks)-1, r.Thinking != ""))
		if i == first {
			st.firstPart()
		}
	}
}
