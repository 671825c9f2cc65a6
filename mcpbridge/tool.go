package mcpbridge

import (
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"fmt"
	"time"

	"github.com/cursorkit/cursorkit/failure"
)

// Prefix starts the name under which the agent sees every tool of a
// bridge: a tool registered as "lookup" is "fn_lookup" to the agent, so
// that the embedder's tools are told apart from any other server's.
const Prefix = "fn_"

// DefaultCallTimeout bounds a call whose Tool sets no Timeout.
const DefaultCallTimeout = 60 * time.Second

// Tool is one tool an embedding program publishes to the agent of a turn.
type Tool struct {
	// Name is 1 to 38 lower-case ASCII letters, digits and '_', starting
	// with a letter; the agent sees it as Prefix+Name.
	Name string
	// Description tells the model what the tool does.
	Description string
	// InputSchema is a JSON Schema of an object: a JSON object whose
	// "type" is "object". The bridge checks calls against nothing more:
	// the handler validates its input.
	InputSchema jsontext.Value
	// Handle runs one call: input is the call's arguments, a JSON object.
	// Its result is the text the agent gets; an error becomes a tool error
	// for that call (its message, never more), and the turn goes on. A
	// handler that panics or outlives Timeout is one too; ctx is cancelled
	// at the timeout, and a handler that ignores it keeps running alone.
	Handle func(ctx context.Context, input jsontext.Value) (string, error)
	// Timeout bounds one call (DefaultCallTimeout when zero).
	Timeout time.Duration
}

// maxName bounds a tool's name so that the longest spelling of a bridged
// tool, Gemini's mcp_SERVER_fn_NAME with a 17-byte SERVER, stays within
// the 63 bytes Gemini CLI keeps of a tool's name.
const maxName = 63 - len("mcp_") - len(ServerName) - 8 - len("_") - len(Prefix)

// validName reports whether name is 1 to maxName lower-case ASCII
// letters, digits and '_', starting with a letter: a name every agent
// spells the same.
func validName(name string) bool {
	if name == "" || len(name) > maxName || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for _, c := range []byte(name) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// checkTools returns a failure.Input error naming the first tool that is
// not one a bridge can publish: a bad or repeated name, a schema that is
// not an object schema, no handler, a negative timeout.
func checkTools(tools []Tool) error {
	if len(tools) == 0 {
		return failure.New(failure.Input, "a bridge needs at least one tool")
	}
	seen := make(map[string]bool, len(tools))
	for i, t := range tools {
		if !validName(t.Name) {
			return failure.New(failure.Input, "tool %d: name %q is not 1 to %d lower-case letters, digits and '_' starting with a letter", i+1, cut(t.Name), maxName)
		}
		if seen[t.Name] {
			return failure.New(failure.Input, "tool %q is registered twice", t.Name)
		}
		seen[t.Name] = true
		if err := CheckSchema(t.InputSchema); err != nil {
			return failure.Wrap(failure.Input, err, "tool %q", t.Name)
		}
		if t.Handle == nil {
			return failure.New(failure.Input, "tool %q has no handler", t.Name)
		}
		if t.Timeout < 0 {
			return failure.New(failure.Input, "tool %q: timeout %s is negative", t.Name, t.Timeout)
		}
	}
	return nil
}

// CheckSchema returns an error unless schema is a JSON object whose "type"
// is "object", the only input schema MCP allows for a tool.
func CheckSchema(schema jsontext.Value) error {
	var s struct {
		Type any `json:"type"`
	}
	if len(schema) == 0 {
		return errors.New("the input schema is missing")
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return fmt.Errorf("the input schema is not a JSON object: %w", err)
	}
	if s.Type != "object" {
		return errors.New(`the input schema's "type" is not "object"`)
	}
	return nil
}

// cut shortens a caller's string for an error message.
func cut(s string) string {
	const max = 64
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// call runs t's handler on input within its timeout, turning a panic, an
// error and an overrun into a tool error: text is the result or the error
// message, failed whether it is an error.
func (t Tool) call(ctx context.Context, input jsontext.Value) (text string, failed bool) {
	ctx, cancel := context.WithTimeout(ctx, cmpDuration(t.Timeout, DefaultCallTimeout))
	defer cancel()
	type answer struct {
		text string
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- answer{err: fmt.Errorf("tool %s failed: its handler panicked", t.Name)}
			}
		}()
		text, err := t.Handle(ctx, input)
		done <- answer{text, err}
	}()
	select {
	case a := <-done:
		if a.err != nil {
			return a.err.Error(), true
		}
		return a.text, false
	case <-ctx.Done():
		if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			return fmt.Sprintf("tool %s did not answer within %s", t.Name, cmpDuration(t.Timeout, DefaultCallTimeout)), true
		}
		return fmt.Sprintf("tool %s was cancelled", t.Name), true
	}
}

func cmpDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
