package codex

import (
	"encoding/json/jsontext"

	"github.com/cursorkit/cursorkit/internal/jsonscan"
)

// fastState is the first way to read a line (see decode.go): one
// jsonscan.Scanner, Reset for every line, reading the line in place. It
// refuses (reports false for) every line it does not read exactly as the
// walk would; the walk then reads it.
type fastState struct {
	s       jsonscan.Scanner
	scratch []byte // a string unquoted

	usage  wireUsage // what wireLine.Usage points to
	counts [3]int64  // what usage's counts point to
	err    wireError // what wireLine.Error points to
}

// line reads line into w (reset), reporting false for a line the walk
// must read.
func (f *fastState) line(line []byte, w *wireLine) bool {
	s := &f.s
	s.Reset(line)
	if !s.Object() {
		return false
	}
	sawItem := false
	var seen jsonscan.Seen
	for {
		name, ok := s.Member()
		if !ok {
			break
		}
		switch string(name) {
		case "type":
			ok = seen.First(0) && s.String(&w.Type, words...)
		case "thread_id":
			ok = seen.First(1) && s.String(&w.ThreadID)
		case "message":
			ok = seen.First(2) && s.String(&w.Message)
		case "item":
			if !seen.First(3) {
				return false
			}
			switch s.Peek() {
			case 'n':
				ok = s.Skip()
			case '{':
				ok, sawItem = f.item(&w.Item), true
			default:
				return false
			}
		case "usage":
			if !seen.First(4) {
				return false
			}
			switch s.Peek() {
			case 'n':
				ok, w.Usage = s.Skip(), nil
			case '{':
				ok, w.Usage = f.usageObject(), &f.usage
			default:
				return false
			}
		case "error":
			if !seen.First(5) {
				return false
			}
			switch s.Peek() {
			case 'n':
				ok, w.Error = s.Skip(), nil
			case '{':
				ok, w.Error = f.errorObject(), &f.err
			default:
				return false
			}
		default:
			ok = s.Skip()
		}
		if !ok {
			return false
		}
	}
	if !s.End() {
		return false
	}
	switch w.Type {
	case "item.started", "item.updated", "item.completed":
		// An item absent or null: the walk says so.
		return sawItem
	}
	return true
}

// item reads the item object (the next value, an object) into it.
func (f *fastState) item(it *wireItem) bool {
	s := &f.s
	if !s.Object() {
		return false
	}
	var seen jsonscan.Seen
	for {
		name, ok := s.Member()
		if !ok {
			break
		}
		switch string(name) {
		case "id":
			ok = seen.First(0) && f.bytes(&it.id)
		case "type":
			ok = seen.First(1) && s.String(&it.Type, words...)
		case "text":
			ok = seen.First(2) && s.String(&it.Text)
		case "message":
			ok = seen.First(3) && s.String(&it.Message)
		case "status":
			ok = seen.First(4) && s.String(&it.Status, words...)
		case "command":
			ok = seen.First(5) && f.raw(&it.Command, '"')
		case "aggregated_output":
			ok = seen.First(6) && f.raw(&it.AggregatedOutput, '"')
		case "exit_code":
			if !seen.First(7) {
				return false
			}
			// An integer, not any number: an int64 as json.Unmarshal reads one.
			if ok = f.raw(&it.ExitCode, '0'); ok && len(it.ExitCode) > 0 {
				_, ok = jsonscan.ParseInt64(it.ExitCode)
			}
		case "changes":
			ok = seen.First(8) && f.raw(&it.Changes, '[')
		case "server":
			if !seen.First(9) {
				return false
			}
			if ok = f.raw(&it.Server, '"'); ok && len(it.Server) > 0 {
				it.server = string(jsonscan.Text(it.Server, &f.scratch))
			} else {
				it.server = ""
			}
		case "tool":
			ok = seen.First(10) && f.raw(&it.Tool, '"')
		case "arguments":
			ok = seen.First(11) && f.raw(&it.Arguments, 0)
		case "result":
			ok = seen.First(12) && f.raw(&it.Result, '{')
		case "error":
			ok = seen.First(13) && f.raw(&it.Error, '{')
		case "query":
			ok = seen.First(14) && f.raw(&it.Query, '"')
		case "action":
			ok = seen.First(15) && f.raw(&it.Action, 0)
		case "receiver_thread_ids":
			ok = seen.First(16) && f.raw(&it.ReceiverThreadIDs, '[')
		case "agents_states":
			ok = seen.First(17) && f.raw(&it.AgentsStates, '{')
		default:
			ok = s.Skip()
		}
		if !ok {
			return false
		}
	}
	if _, _, tool := toolOf(it); tool {
		// Only a tool's event keeps its id: the said items are a set of
		// bytes, other items say no id.
		it.ID = string(it.id)
	}
	return !s.Failed()
}

// usageObject reads turn.completed's usage (the next value, an object)
// into f.usage.
func (f *fastState) usageObject() bool {
	s := &f.s
	if !s.Object() {
		return false
	}
	f.usage = wireUsage{}
	var seen jsonscan.Seen
	for {
		name, ok := s.Member()
		if !ok {
			break
		}
		switch string(name) {
		case "input_tokens":
			ok = seen.First(0) && f.int(&f.usage.InputTokens, &f.counts[0])
		case "cached_input_tokens":
			ok = seen.First(1) && f.int(&f.usage.CachedInputTokens, &f.counts[1])
		case "output_tokens":
			ok = seen.First(2) && f.int(&f.usage.OutputTokens, &f.counts[2])
		default:
			ok = s.Skip()
		}
		if !ok {
			return false
		}
	}
	return !s.Failed()
}

// errorObject reads turn.failed's error (the next value, an object) into
// f.err.
func (f *fastState) errorObject() bool {
	s := &f.s
	if !s.Object() {
		return false
	}
	f.err = wireError{}
	var seen jsonscan.Seen
	for {
		name, ok := s.Member()
		if !ok {
			break
		}
		if string(name) == "message" {
			ok = seen.First(0) && s.String(&f.err.Message)
		} else {
			ok = s.Skip()
		}
		if !ok {
			return false
		}
	}
	return !s.Failed()
}

// words are the event types, item types and statuses Codex sends.
var words = []string{"thread.started", "turn.started", "item.started", "item.updated", "item.completed", "turn.completed",
	"turn.failed", "error", "agent_message", "reasoning", "command_execution", "file_change", "mcp_tool_call", "web_search",
	"collab_tool_call", "todo_list", "in_progress", "completed", "failed", "declined"}

// bytes reads the next value, a string or null (empty), into *b, as
// str does.
func (f *fastState) bytes(b *[]byte) bool {
	t, ok := f.s.Str()
	*b = append((*b)[:0], t...)
	return ok
}

// raw copies the next value into *dst, emptied when null; want, when not
// 0, is the kind it must have.
func (f *fastState) raw(dst *jsontext.Value, want jsontext.Kind) bool {
	v := f.s.Value()
	if v == nil {
		return false
	}
	switch k := v.Kind(); {
	case k == 'n':
		*dst = (*dst)[:0]
		return true
	case want != 0 && k != want:
		return false
	}
	*dst = append((*dst)[:0], v...)
	return true
}

// int reads the next value, an int64 or null (nil), pointing *p at n.
func (f *fastState) int(p **int64, n *int64) bool {
	v, present, ok := f.s.Int()
	*p = nil
	if present {
		*n, *p = v, n
	}
	return ok
}
