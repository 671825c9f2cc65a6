package codex

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"strconv"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/turn"
)

// The wire types of `codex exec --json` (codex-rs/exec/src/exec_events.rs),
// which encoding/json/v2 reads a line into. A line is read for its type
// first (turn.Stream.Head); only then, for a type the decoder knows, for the
// members of that type (decode), so a line of any other type passes on
// whole whatever its members hold. An item is read once, into the members
// of every item type (wireItem), of which only those its type uses must
// have their kind. Null reads as absent.

// threadStarted is a thread.started event.
type threadStarted struct {
	ThreadID string `json:"thread_id"`
}

// itemEvent is an item.started, item.updated or item.completed event.
type itemEvent struct {
	Item itemRef `json:"item"`
}

// itemRef reads an item event's item into it, which the decoder keeps
// from line to line; ok reports that the event has one (an object, not
// null: no item, even after one).
type itemRef struct {
	it *wireItem
	ok bool
}

func (r *itemRef) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if r.ok = dec.PeekKind() != 'n'; !r.ok {
		return dec.SkipValue()
	}
	return json.UnmarshalDecode(dec, r.it)
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

// wireItem is the item of an item event, read once: its id and type, and
// the members of every item type the decoder knows, each a turn.Field
// whose kind matters only when the item's type uses it (members).
type wireItem struct {
	ID   string `json:"id"`
	Type string `json:"type"`

	Text    turn.Field[string] `json:"text"`    // agent_message, reasoning
	Message turn.Field[string] `json:"message"` // error
	Status  turn.Field[string] `json:"status"`  // the tools but web_search

	Command          turn.Field[turn.RawString] `json:"command"`           // command_execution
	AggregatedOutput turn.Field[turn.RawString] `json:"aggregated_output"` // command_execution
	ExitCode         turn.Field[*int64]         `json:"exit_code"`         // command_execution

	Changes turn.Field[turn.RawArray] `json:"changes"` // file_change

	// Server is read as text: the policy names servers.
	Server    turn.Field[*string]        `json:"server"`    // mcp_tool_call
	Tool      turn.Field[turn.RawString] `json:"tool"`      // mcp_tool_call, collab_tool_call
	Arguments turn.Field[jsontext.Value] `json:"arguments"` // mcp_tool_call
	Result    turn.Field[turn.RawObject] `json:"result"`    // mcp_tool_call
	Error     turn.Field[turn.RawObject] `json:"error"`     // mcp_tool_call

	// A web_search item carries two "id" members, the item's then the
	// search's (ThreadItem flattens WebSearchItem): the last counts, as
	// with serde_json and JSON.parse.
	Query  turn.Field[turn.RawString] `json:"query"`  // web_search
	Action turn.Field[jsontext.Value] `json:"action"` // web_search

	// A collab_tool_call's prompt is not read: it may quote the user's.
	ReceiverThreadIDs turn.Field[turn.RawArray]  `json:"receiver_thread_ids"` // collab_tool_call
	AgentsStates      turn.Field[turn.RawObject] `json:"agents_states"`       // collab_tool_call
}

// members are the errors of the members it's type uses (nil for the
// rest of the array); a type the decoder does not know (todo_list, plan,
// ...) uses none. An array, not a slice, so that a line's check
// allocates nothing.
func (it *wireItem) members() [6]error {
	switch it.Type {
	case "agent_message", "reasoning":
		return [6]error{it.Text.Err()}
	case "error":
		return [6]error{it.Message.Err()}
	case "command_execution":
		return [6]error{it.Command.Err(), it.AggregatedOutput.Err(), it.ExitCode.Err(), it.Status.Err()}
	case "file_change":
		return [6]error{it.Changes.Err(), it.Status.Err()}
	case "mcp_tool_call":
		return [6]error{it.Server.Err(), it.Tool.Err(), it.Arguments.Err(), it.Result.Err(), it.Error.Err(), it.Status.Err()}
	case "web_search":
		return [6]error{it.Query.Err(), it.Action.Err()}
	case "collab_tool_call":
		return [6]error{it.Tool.Err(), it.ReceiverThreadIDs.Err(), it.AgentsStates.Err(), it.Status.Err()}
	}
	return [6]error{}
}

// tool names the tool an item of a tool type calls, and for an MCP call
// its server; ok is false for an item that calls none.
func (it *wireItem) tool() (name, server string, ok bool) {
	switch it.Type {
	case "command_execution":
		return ToolShell, "", true
	case "file_change":
		return ToolFileChange, "", true
	case "mcp_tool_call":
		if s := it.Server.Value(); s != nil {
			server = *s
		}
		return ToolMCP, server, true
	case "web_search":
		return ToolWebSearch, "", true
	case "collab_tool_call":
		return ToolCollab, "", true
	}
	return "", "", false
}

// fill sets t's Args from a tool item, and when done its Status and
// Result.
func (it *wireItem) fill(t *event.Tool, done bool) {
	switch it.Type {
	case "command_execution":
		t.Args = buildObject(member{"command", it.Command.Value()})
		if !done {
			return
		}
		if code, out := it.ExitCode.Value(), it.AggregatedOutput.Value(); code != nil || out != nil {
			var codeJSON []byte
			if code != nil {
				// buildObject copies it: the digits stay on the stack.
				var digits [20]byte
				codeJSON = strconv.AppendInt(digits[:0], *code, 10)
			}
			t.Result = buildObject(member{"exit_code", codeJSON}, member{"aggregated_output", out})
		}
	case "file_change":
		t.Args = buildObject(member{"changes", it.Changes.Value()})
	case "mcp_tool_call":
		var server []byte
		if s := it.Server.Value(); s != nil {
			// Valid UTF-8 (json/v2 replaced what was not), so AppendQuote
			// reports no error; its quote would be right even then.
			server, _ = jsontext.AppendQuote(nil, *s)
		}
		t.Args = buildObject(member{"server", server}, member{"tool", it.Tool.Value()}, member{"arguments", it.Arguments.Value()})
		if res, fail := it.Result.Value(), it.Error.Value(); done && (res != nil || fail != nil) {
			t.Result = buildObject(member{"result", res}, member{"error", fail})
		}
	case "web_search":
		t.Args = buildObject(member{"query", it.Query.Value()}, member{"action", it.Action.Value()})
		return // no status
	case "collab_tool_call":
		t.Args = buildObject(member{"tool", it.Tool.Value()}, member{"receiver_thread_ids", it.ReceiverThreadIDs.Value()})
		if states := it.AgentsStates.Value(); done && states != nil {
			t.Result = jsontext.Value(states)
		}
	}
	if done {
		t.Status = it.Status.Value()
	}
}

// member is one member of an object buildObject writes.
type member struct {
	name string // plain ASCII, written as is between quotes
	v    []byte // a JSON value; nil is written as null
}

// buildObject writes {"k1":v1,...}, a copy of the values, in one
// allocation of its exact size.
func buildObject(ms ...member) jsontext.Value {
	size := len("{}")
	for _, m := range ms {
		size += len(`,"":`) + len(m.name) + max(len(m.v), len("null"))
	}
	b := append(make(jsontext.Value, 0, size), '{')
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
