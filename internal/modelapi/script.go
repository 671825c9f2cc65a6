package modelapi

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"fmt"
	"strings"
)

// Script is the model's side of one turn: the replies to the CLI's model
// requests, in order. A request after the last gets an HTTP 400 and is
// recorded as Request.Exhausted.
type Script struct {
	Replies []Reply `json:"replies"`
	// Watch are words whose presence in each model request's body the
	// stand-in records (Request.Mentioned): a tool the CLI describes to
	// the model only in text, as Codex's code mode names MCP tools.
	Watch []string `json:"watch,omitzero"`
}

// Reply is the model's answer to one request: an HTTP error, or a stream
// of thinking, text and tool calls, maybe broken by a fault.
type Reply struct {
	Times int `json:"times,omitzero"` // requests in a row that get it; 0 is 1

	// Error answers with the API's HTTP error (an Err constant) instead of
	// a stream, with a retry-after header of RetryAfter seconds unless 0.
	Error      string `json:"error,omitzero"`
	RetryAfter int    `json:"retryAfter,omitzero"`

	// The stream is Thinking, Text (one delta each), then Calls; a reply
	// with calls ends with a tool-use stop, one without ends the turn.
	Thinking string   `json:"thinking,omitzero"`
	Text     []string `json:"text,omitzero"`
	Calls    []Call   `json:"calls,omitzero"`

	// Fault breaks the stream after its first part (its start and the
	// first text delta, if any): FaultStall goes silent until the client
	// leaves or the server closes, FaultDrop cuts the connection,
	// FaultMalformed sends an event that is not JSON and goes on.
	Fault string `json:"fault,omitzero"`
}

// The errors a Reply can answer with, each the API's own status and body.
const (
	ErrRateLimit    = "rate_limit"   // 429
	ErrUnauthorized = "unauthorized" // 401
	ErrForbidden    = "forbidden"    // 403
	ErrOverloaded   = "overloaded"   // 529 (Anthropic), 503 (OpenAI, Gemini)
	ErrServer       = "server"       // 500
)

// The faults a Reply's stream can have.
const (
	FaultStall     = "stall"
	FaultDrop      = "drop"
	FaultMalformed = "malformed"
)

// Call is one tool call of the model, by the CLI's own tool name, with
// either Input, a function tool's JSON object, or Code, the whole input of
// a freeform tool (the Responses API's custom tool call: Codex's exec and
// apply_patch).
type Call struct {
	Name  string         `json:"name"`
	Input jsontext.Value `json:"input,omitzero"`
	Code  string         `json:"code,omitzero"`
}

// Parse returns the script of a JSON document: every member known, every
// reply playable (Check).
func Parse(doc []byte) (Script, error) {
	var s Script
	if err := json.Unmarshal(doc, &s, json.RejectUnknownMembers(true)); err != nil {
		return Script{}, fmt.Errorf("script: %w", err)
	}
	return s, s.Check()
}

// Check reports the first reply that cannot be played, or an empty
// watched word.
func (s Script) Check() error {
	for i, w := range s.Watch {
		if w == "" {
			return fmt.Errorf("watch %d: empty", i)
		}
	}
	for i, r := range s.Replies {
		if r.Times < 0 {
			return fmt.Errorf("reply %d: times %d is negative", i, r.Times)
		}
		switch r.Error {
		case "", ErrRateLimit, ErrUnauthorized, ErrForbidden, ErrOverloaded, ErrServer:
		default:
			return fmt.Errorf("reply %d: unknown error %q", i, r.Error)
		}
		switch r.Fault {
		case "", FaultStall, FaultDrop, FaultMalformed:
		default:
			return fmt.Errorf("reply %d: unknown fault %q", i, r.Fault)
		}
		if r.Error != "" && (r.Fault != "" || r.Thinking != "" || len(r.Text) > 0 || len(r.Calls) > 0) {
			return fmt.Errorf("reply %d: an error reply has no stream", i)
		}
		if r.Error == "" && r.Thinking == "" && len(r.Text) == 0 && len(r.Calls) == 0 {
			return fmt.Errorf("reply %d: says nothing", i)
		}
		for j, c := range r.Calls {
			if c.Name == "" {
				return fmt.Errorf("reply %d, call %d: no name", i, j)
			}
			if (c.Input == nil) == (c.Code == "") {
				return fmt.Errorf("reply %d, call %s: exactly one of input and code", i, c.Name)
			}
			if c.Input != nil && (!c.Input.IsValid() || c.Input.Kind() != '{') {
				return fmt.Errorf("reply %d, call %s: input is not a JSON object", i, c.Name)
			}
		}
	}
	return nil
}

// at returns the reply for the n-th model request (0-based), or false
// when the script has none left.
func (s Script) at(n int) (Reply, int, bool) {
	for i, r := range s.Replies {
		times := max(r.Times, 1)
		if n < times {
			return r, i, true
		}
		n -= times
	}
	return Reply{}, -1, false
}

// expand returns r with every {{NAME}} of vars replaced in its texts and
// calls: inside a call's JSON input the value is written as JSON string
// content, so a path with a backslash or a quote stays valid JSON. Bytes
// that are not UTF-8 become U+FFFD: every text goes out in JSON, which
// cannot hold them.
func (r Reply) expand(vars map[string]string) Reply {
	if len(vars) == 0 {
		return r
	}
	var plain, escaped []string
	for name, value := range vars {
		value = strings.ToValidUTF8(value, "\uFFFD")
		q, _ := json.Marshal(value)
		plain = append(plain, "{{"+name+"}}", value)
		escaped = append(escaped, "{{"+name+"}}", string(q[1:len(q)-1]))
	}
	text, inJSON := strings.NewReplacer(plain...), strings.NewReplacer(escaped...)
	out := r
	out.Thinking = text.Replace(r.Thinking)
	out.Text = make([]string, len(r.Text))
	for i, t := range r.Text {
		out.Text[i] = text.Replace(t)
	}
	out.Calls = make([]Call, len(r.Calls))
	for i, c := range r.Calls {
		c.Code = text.Replace(c.Code)
		if c.Input != nil {
			c.Input = jsontext.Value(inJSON.Replace(string(c.Input)))
		}
		out.Calls[i] = c
	}
	return out
}
