package modelapi

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"fmt"
	"net/http"
	"strings"
)

// geminiRequest is what the stand-in reads of a generateContent or
// streamGenerateContent request.
type geminiRequest struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			FunctionResponse *struct {
				Name     string         `json:"name"`
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

func (in geminiRequest) toolNames() []string {
	var names []string
	for _, t := range in.Tools {
		for _, f := range t.FunctionDeclarations {
			names = append(names, f.Name)
		}
	}
	return names
}

// toolResults returns every functionResponse's response: its "output"
// string when it has one (Gemini CLI's shape), else its JSON.
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
// JSON in a schema): an object with every property of the schema, each
// with the plainest value of its type: a string names the stand-in, a
// number is 10 (a low complexity score routes to the fast model), an
// enumeration takes its first value.
func (in geminiRequest) sideAnswer(model string) map[string]any {
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
	chunk := geminiChunk(model, "standin-side", []any{map[string]any{"text": text}}, "STOP", false, false)
	// A utility call is small beside the turn's own (no tools, no
	// system prompt of the agent's).
	chunk["usageMetadata"] = map[string]any{"promptTokenCount": SideInputTokens, "candidatesTokenCount": SideOutputTokens,
		"totalTokenCount": SideInputTokens + SideOutputTokens}
	return chunk
}

// jsonSchema is the part of a JSON schema (or the Gemini API's OpenAPI
// subset, with upper-case types) sideAnswer reads.
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

// geminiDialect is streamGenerateContent?alt=sse: "data:" events without
// names, each a GenerateContentResponse with one candidate's new parts;
// the last has the finish reason and the usage.
type geminiDialect struct {
	model string
}

func (geminiDialect) fail(w http.ResponseWriter, r Reply) {
	status, msg := "INTERNAL", "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"
	switch r.Error {
	case ErrRateLimit:
		status, msg = "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."
	case ErrUnauthorized:
		status, msg = "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."
	case ErrForbidden:
		status, msg = "PERMISSION_DENIED", "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."
	case ErrOverloaded:
		status, msg = "UNAVAILABLE", "The model is overloaded. Please try again later."
	}
	writeGeminiError(w, httpStatus(r.Error, Gemini), status, msg)
}

func (geminiDialect) exhausted(w http.ResponseWriter) {
	writeGeminiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "the stand-in's script has no reply left")
}

func writeGeminiError(w http.ResponseWriter, code int, status, msg string) {
	writeJSON(w, code, map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}})
}

// geminiChunk is one GenerateContentResponse with parts; finish, when
// not "", is its finish reason, and last adds the usage.
func geminiChunk(model, id string, parts []any, finish string, last, thought bool) map[string]any {
	candidate := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	if finish != "" {
		candidate["finishReason"] = finish
	}
	chunk := map[string]any{"candidates": []any{candidate}, "modelVersion": model, "responseId": id}
	if last {
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
	id := fmt.Sprintf("standin-%d", n)
	type chunk struct {
		parts []any
		first bool // the first part: a fault comes after it
	}
	var chunks []chunk
	if r.Thinking != "" {
		chunks = append(chunks, chunk{parts: []any{map[string]any{"text": r.Thinking, "thought": true}}})
	}
	for i, t := range r.Text {
		chunks = append(chunks, chunk{parts: []any{map[string]any{"text": t}}, first: i == 0})
	}
	var calls []any
	for i, c := range r.Calls {
		calls = append(calls, map[string]any{"functionCall": map[string]any{
			"id": fmt.Sprintf("call_standin_%d_%d", n, i), "name": c.Name, "args": c.Input}})
	}
	if len(calls) > 0 {
		chunks = append(chunks, chunk{parts: calls})
	}
	for i, c := range chunks {
		last := i == len(chunks)-1
		finish := ""
		if last {
			finish = "STOP"
		}
		st.event("", geminiChunk(d.model, id, c.parts, finish, last, r.Thinking != ""))
		if c.first || len(r.Text) == 0 && i == 0 {
			st.firstPart()
		}
	}
}
