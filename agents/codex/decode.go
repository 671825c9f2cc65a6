package codex

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"reflect"
	"strconv"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/turn"
)

// The wire types of `codex exec --json` (codex-rs/exec/src/exec_events.rs),
// which encoding/json/v2 reads a line into. A line is read for its type
// first (turn.Stream.Head); only then, for a type the decoder knows, for the
// members of that type (decode), so a line of any other type passes on
// whole whatever its members hold, and a member a type does not use may
// hold anything. An item is read the same way within its line: its id and
// type first, then the members of its type. Null reads as absent.

// threadStarted is a thread.started event.
type threadStarted struct {
	ThreadID string `json:"thread_id"`
}

// itemEvent is an item.started, item.updated or item.completed event.
type itemEvent struct {
	Item wireItem `json:"item"`
}

// turnCompleted is a turn.completed event.
type turnCompleted struct {
	Usage *wireUsage `json:"usage"`
}

// wireUsage is turn.completed's usage; a count is nil when absent.
type wireUsage struct {
	InputTokens       *int64 `json:"input_tokens"`
	CachedInputTokens *int64 `json:"cached_input_tokens"`
	OutputTokens      *int64 `json:"output_tokens"`
}

// turnFailed is a turn.failed event.
type turnFailed struct {
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// errorEvent is a top-level error event.
type errorEvent struct {
	Message string `json:"message"`
}

// decode reads line, a JSON object of type typ, into a new T with s's
// Unmarshal: an error is s's protocol failure, which names typ.
func decode[T any](s *turn.Stream, line []byte, typ string) (*T, error) {
	v := new(T)
	// line was read once already: it is an object, never a banner.
	_, err := s.Unmarshal(line, v, typ)
	return v, err
}

// wireItem is the item of an item event: its id and type, and body, the
// members of its type (nil for a type the decoder does not know); ok
// reports that the event has one (an object, not null).
type wireItem struct {
	ID, Type string
	body     any
	ok       bool
	line     []byte // the line being read, whose item is read from its bytes
}

// UnmarshalJSONFrom reads the item: its id and type, then its body.
func (it *wireItem) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() == 'n' {
		*it = wireItem{line: it.line} // no item, even after one
		return dec.SkipValue()
	}
	head := []turn.Member{{Name: "id", Value: &it.ID}, {Name: "type", Value: &it.Type}}
	err := turn.UnmarshalTyped(dec, it.line, head, func() any {
		it.body = newItemBody(it.Type)
		return it.body
	})
	it.ok = err == nil
	return err
}

// newItemBody returns a new body for an item of type typ, nil for a type
// the decoder does not know (todo_list, plan, ...).
func newItemBody(typ string) any {
	switch typ {
	case "agent_message":
		return new(agentMessage)
	case "reasoning":
		return new(reasoning)
	case "error":
		return new(errorItem)
	case "command_execution":
		return new(commandItem)
	case "file_change":
		return new(fileChangeItem)
	case "mcp_tool_call":
		return new(mcpItem)
	case "web_search":
		return new(webSearchItem)
	case "collab_tool_call":
		return new(collabItem)
	}
	return nil
}

// agentMessage is an agent_message item: the model's words.
type agentMessage struct {
	Text string `json:"text"`
}

// reasoning is a reasoning item: the model's thinking.
type reasoning struct {
	Text string `json:"text"`
}

// errorItem is an error item: an error Codex goes on after.
type errorItem struct {
	Message string `json:"message"`
}

// toolItem is the body of an item that calls a tool.
type toolItem interface {
	// tool names the tool called, and for an MCP call its server.
	tool() (name, server string)
	// fill sets t's Args, and when done its Status and Result.
	fill(t *event.Tool, done bool)
}

// commandItem is a command_execution item, the tool ToolShell.
type commandItem struct {
	Command          rawString `json:"command"`
	AggregatedOutput rawString `json:"aggregated_output"`
	ExitCode         *int64    `json:"exit_code"`
	Status           string    `json:"status"`
}

func (c *commandItem) tool() (string, string) { return ToolShell, "" }

func (c *commandItem) fill(t *event.Tool, done bool) {
	t.Args = buildObject(member{"command", c.Command})
	if !done {
		return
	}
	t.Status = c.Status
	if c.ExitCode != nil || c.AggregatedOutput != nil {
		var code []byte
		if c.ExitCode != nil {
			code = strconv.AppendInt(nil, *c.ExitCode, 10)
		}
		t.Result = buildObject(member{"exit_code", code}, member{"aggregated_output", c.AggregatedOutput})
	}
}

// fileChangeItem is a file_change item (apply_patch), the tool
// ToolFileChange.
type fileChangeItem struct {
	Changes rawArray `json:"changes"`
	Status  string   `json:"status"`
}

func (f *fileChangeItem) tool() (string, string) { return ToolFileChange, "" }

func (f *fileChangeItem) fill(t *event.Tool, done bool) {
	t.Args = buildObject(member{"changes", f.Changes})
	if done {
		t.Status = f.Status
	}
}

// mcpItem is an mcp_tool_call item, the tool ToolMCP. Its server is read
// as text: the policy names servers.
type mcpItem struct {
	Server    *string        `json:"server"`
	Tool      rawString      `json:"tool"`
	Arguments jsontext.Value `json:"arguments"`
	Result    rawObject      `json:"result"`
	Error     rawObject      `json:"error"`
	Status    string         `json:"status"`
}

func (m *mcpItem) tool() (string, string) {
	if m.Server == nil {
		return ToolMCP, ""
	}
	return ToolMCP, *m.Server
}

func (m *mcpItem) fill(t *event.Tool, done bool) {
	var server []byte
	if m.Server != nil {
		// Valid UTF-8 (json/v2 replaced what was not), so AppendQuote
		// reports no error; its quote would be right even then.
		server, _ = jsontext.AppendQuote(nil, *m.Server)
	}
	t.Args = buildObject(member{"server", server}, member{"tool", m.Tool}, member{"arguments", m.Arguments})
	if !done {
		return
	}
	t.Status = m.Status
	if m.Result != nil || m.Error != nil {
		t.Result = buildObject(member{"result", m.Result}, member{"error", m.Error})
	}
}

// webSearchItem is a web_search item, the tool ToolWebSearch. It carries
// two "id" members, the item's then the search's (ThreadItem flattens
// WebSearchItem): the last counts, as with serde_json and JSON.parse.
type webSearchItem struct {
	Query  rawString      `json:"query"`
	Action jsontext.Value `json:"action"`
}

func (w *webSearchItem) tool() (string, string) { return ToolWebSearch, "" }

func (w *webSearchItem) fill(t *event.Tool, _ bool) {
	t.Args = buildObject(member{"query", w.Query}, member{"action", w.Action})
}

// collabItem is a collab_tool_call item (sub-agents), the tool
// ToolCollab. Its prompt is not read: it may quote the user's.
type collabItem struct {
	Tool              rawString `json:"tool"`
	ReceiverThreadIDs rawArray  `json:"receiver_thread_ids"`
	AgentsStates      rawObject `json:"agents_states"`
	Status            string    `json:"status"`
}

func (c *collabItem) tool() (string, string) { return ToolCollab, "" }

func (c *collabItem) fill(t *event.Tool, done bool) {
	t.Args = buildObject(member{"tool", c.Tool}, member{"receiver_thread_ids", c.ReceiverThreadIDs})
	if done {
		t.Status = c.Status
		if c.AgentsStates != nil {
			t.Result = jsontext.Value(c.AgentsStates)
		}
	}
}

// rawString, rawArray and rawObject are members passed on as they are
// written, which Codex sends as a JSON string, array or object; null
// reads as absent (nil), any other kind is an error.
type (
	rawString jsontext.Value
	rawArray  jsontext.Value
	rawObject jsontext.Value
)

func (r *rawString) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return readRaw(dec, (*jsontext.Value)(r), '"', reflect.TypeFor[string]())
}

func (r *rawArray) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return readRaw(dec, (*jsontext.Value)(r), '[', reflect.TypeFor[[]any]())
}

func (r *rawObject) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return readRaw(dec, (*jsontext.Value)(r), '{', reflect.TypeFor[map[string]any]())
}

// readRaw reads the next value into dst, a copy, when it is of kind want,
// nil when it is null. A value of another kind is the error json/v2 gives
// for a Go value of type goType, which reads want ("is a number, not a
// string").
func readRaw(dec *jsontext.Decoder, dst *jsontext.Value, want jsontext.Kind, goType reflect.Type) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	switch k := v.Kind(); k {
	case 'n':
		*dst = nil
	case want:
		*dst = bytes.Clone(v)
	default:
		return &json.SemanticError{JSONKind: k, GoType: goType}
	}
	return nil
}

// member is one member of an object buildObject writes.
type member struct {
	name string // plain ASCII, written as is between quotes
	v    []byte // a JSON value; nil is written as null
}

// buildObject writes {"k1":v1,...}, a copy of the values.
func buildObject(ms ...member) jsontext.Value {
	b := jsontext.Value{'{'}
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, m.name...)
		b = append(b, '"', ':')
		if m.v != nil {
			b = append(b, m.v...)
		} else {
			b = append(b, "null"...)
		}
	}
	return append(b, '}')
}
