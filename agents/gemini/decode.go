package gemini

import (
	"encoding/json/jsontext"
	"encoding/json/v2"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/turn"
)

// The wire types below are what a line of gemini's stream-json is read
// into (packages/core/src/output/types.ts, JsonStreamEventType), each
// with turn.Stream.Unmarshal. A line is read for its type first
// (turn.Stream.Head), then, for a type gemini documents, as that type's
// own struct, which holds only the members the type uses, each of the
// kind gemini sends it with (null reads as absent). So an event of a type no decoder
// knows passes whole whatever its members hold, and a member a known
// type does not use may hold anything.

// stamp is the member every event carries; only its kind is checked.
type stamp struct {
	Timestamp turn.StringKind `json:"timestamp"`
}

// wireInit is an init event: the session and the model asked for.
type wireInit struct {
	stamp
	SessionID string `json:"session_id"`
	Model     string `json:"model"`
}

// wireMessage is a message event: the prompt's echo (role "user") or
// what the model says (role "assistant"), a delta or a whole message.
type wireMessage struct {
	stamp
	Role    string `json:"role"`
	Content string `json:"content"`
	Delta   bool   `json:"delta"`
}

// wireToolUse is a tool_use event, sent before the tool runs.
type wireToolUse struct {
	stamp
	ToolName   string         `json:"tool_name"`
	ToolID     string         `json:"tool_id"`
	Parameters turn.RawObject `json:"parameters"`
}

// wireToolResult is a tool_result event: the output when the call
// succeeded, the error object when it failed.
type wireToolResult struct {
	stamp
	ToolID string         `json:"tool_id"`
	Status string         `json:"status"`
	Output turn.RawString `json:"output"`
	Error  turn.RawObject `json:"error"`
}

// wireError is an error event: a warning, or an error that fails the
// turn although gemini goes on to a result.
type wireError struct {
	stamp
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// wireResult is the result event, gemini's last.
type wireResult struct {
	stamp
	Status string           `json:"status"`
	Error  *wireResultError `json:"error"`
	Stats  *wireStats       `json:"stats"`
}

// wireResultError is a failed result's error: gemini's error class
// (FatalAuthenticationError, ...) and its message.
type wireResultError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// wireStats is the result's stats (StreamJsonFormatter.convertToStreamStats).
// Gemini's input_tokens is the prompt token count, which includes the
// cached tokens (cached); its input is input_tokens minus cached
// (uiTelemetry: tokens.input = max(0, prompt - cached)). Gemini reports
// no cache writes.
type wireStats struct {
	InputTokens  *int64         `json:"input_tokens"`
	OutputTokens *int64         `json:"output_tokens"`
	Cached       *int64         `json:"cached"`
	Input        *int64         `json:"input"`
	DurationMs   *int64         `json:"duration_ms"`
	TotalTokens  *int64         `json:"total_tokens"`
	ToolCalls    *int64         `json:"tool_calls"`
	Models       jsontext.Value `json:"models"` // any shape: answeredModel reads what it can
}

// usage is the Usage s reports: Usage's InputTokens excludes cache
// reads, so it is input when reported, else input_tokens minus cached
// when both are; CacheReadTokens is cached. A nil s is unreported usage.
func (s *wireStats) usage() event.Usage {
	if s == nil {
		return event.Usage{}
	}
	u := event.Usage{Reported: true, InputTokens: s.Input, OutputTokens: s.OutputTokens, CacheReadTokens: s.Cached}
	if u.InputTokens == nil && s.InputTokens != nil && s.Cached != nil {
		n := max(0, *s.InputTokens-*s.Cached)
		u.InputTokens = &n
	}
	return u
}

// answeredModel is the model that answered the turn, read from the
// result's stats.models ({"MODEL": {"total_tokens": N, ...}, ...}, one
// entry per model the turn called, keyed by the model the API said
// answered): the one with the most tokens, as the turn's own model does
// most of the work (a routing classifier's call is small); "" when
// models is absent or not that shape. Ties go to the name that sorts
// first.
func answeredModel(models jsontext.Value) string {
	if len(models) == 0 {
		return ""
	}
	var byModel map[string]struct {
		TotalTokens int64 `json:"total_tokens"`
	}
	if json.Unmarshal(models, &byModel, turn.UnmarshalOptions()) != nil {
		return ""
	}
	best, most := "", int64(-1)
	for name, m := range byModel {
		if m.TotalTokens > most || m.TotalTokens == most && name < best {
			best, most = name, m.TotalTokens
		}
	}
	return best
}
