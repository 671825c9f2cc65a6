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
	var seen uint32
	for {
		name, ok := s.Member()
		if !ok {
			break
		}
		switch string(name) {
		case "type":
			ok = once(&seen, 1<<0) && f.str(&w.Type, true)
		case "thread_id":
			ok = once(&seen, 1<<1) && f.str(&w.ThreadID, false)
		case "message":
			ok = once(&seen, 1<<2) && f.str(&w.Message, false)
		case "item":
			if !once(&seen, 1<<3) {
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
			if !once(&seen, 1<<4) {
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
			if !once(&seen, 1<<5) {
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
	var seen uint32
	for {
		name, ok := s.Member()
		if !ok {
			break
		}
		switch string(name) {
		case "id":
			ok = once(&seen, 1<<0) && f.bytes(&it.id)
		case "type":
			ok = once(&seen, 1<<1) && f.str(&it.Type, true)
		case "text":
			ok = once(&seen, 1<<2) && f.str(&it.Text, false)
		case "message":
			ok = once(&seen, 1<<3) && f.str(&it.Message, false)
		case "status":
			ok = once(&seen, 1<<4) && f.str(&it.Status, true)
		case "command":
			ok = once(&seen, 1<<5) && f.raw(&it.Command, '"')
		case "aggregated_output":
			ok = once(&seen, 1<<6) && f.raw(&it.AggregatedOutput, '"')
		case "exit_code":
			if !once(&seen, 1<<7) {
				return false
			}
			// An integer, not any number: an int64 as json.Unmarshal reads one.
			if ok = f.raw(&it.ExitCode, '0'); ok && len(it.ExitCode) > 0 {
				_, ok = jsonscan.ParseInt64(it.ExitCode)
			}
		case "changes":
			ok = once(&seen, 1<<8) && f.raw(&it.Changes, '[')
		case "server":
			if !once(&seen, 1<<9) {
				return false
			}
			if ok = f.raw(&it.Server, '"'); ok && len(it.Server) > 0 {
				it.server = f.unquote(it.Server, false)
			} else {
				it.server = ""
			}
		case "tool":
			ok = once(&seen, 1<<10) && f.raw(&it.Tool, '"')
		case "arguments":
			ok = once(&seen, 1<<11) && f.raw(&it.Arguments, 0)
		case "result":
			ok = once(&seen, 1<<12) && f.raw(&it.Result, '{')
		case "error":
			ok = once(&seen, 1<<13) && f.raw(&it.Error, '{')
		case "query":
			ok = once(&seen, 1<<14) && f.raw(&it.Query, '"')
		case "action":
			ok = once(&seen, 1<<15) && f.raw(&it.Action, 0)
		case "receiver_thread_ids":
			ok = once(&seen, 1<<16) && f.raw(&it.ReceiverThreadIDs, '[')
		case "agents_states":
			ok = once(&seen, 1<<17) && f.raw(&it.AgentsStates, '{')
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
	var seen uint32
	for {
		name, ok := s.Member()
		if !ok {
			break
		}
		switch string(name) {
		case "input_tokens":
			ok = once(&seen, 1<<0) && f.int(&f.usage.InputTokens, &f.counts[0])
		case "cached_input_tokens":
			ok = once(&seen, 1<<1) && f.int(&f.usage.CachedInputTokens, &f.counts[1])
		case "output_tokens":
			ok = once(&seen, 1<<2) && f.int(&f.usage.OutputTokens, &f.counts[2])
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
	var seen uint32
	for {
		name, ok := s.Member()
		if !ok {
			break
		}
		if string(name) == "message" {
			ok = once(&seen, 1) && f.str(&f.err.Message, false)
		} else {
			ok = s.Skip()
		}
		if !ok {
			return false
		}
	}
	return !s.Failed()
}

// once records the member of bit in *seen, false when it was seen
// already: a name given twice is read by the walk (the last value wins).
func once(seen *uint32, bit uint32) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// str reads the next value, a string or null ("") into *s. With intern,
// the type and status names Codex sends take no allocation.
func (f *fastState) str(s *string, intern bool) bool {
	v := f.s.Value()
	if v == nil {
		return false
	}
	switch v.Kind() {
	case 'n':
		*s = ""
		return true
	case '"':
		*s = f.unquote(v, intern)
		return true
	}
	return false
}

// bytes reads the next value, a string or null (empty), into *b, as
// str does.
func (f *fastState) bytes(b *[]byte) bool {
	v := f.s.Value()
	if v == nil {
		return false
	}
	switch v.Kind() {
	case 'n':
		*b = (*b)[:0]
		return true
	case '"':
		t := jsonscan.Text(v, &f.scratch)
		*b = append((*b)[:0], t...)
		return true
	}
	return false
}

// unquote returns the string v (a JSON string) holds, as json.Unmarshal
// reads it with invalid UTF-8 allowed: invalid UTF-8 and lone surrogate
// escapes read as U+FFFD.
func (f *fastState) unquote(v jsontext.Value, intern bool) string {
	b := jsonscan.Text(v, &f.scratch)
	if intern {
		if s := known(b); s != "" {
			return s
		}
	}
	return string(b)
}

// known returns the constant that equals b among the event types, item
// types and statuses Codex sends, "" for another.
func known(b []byte) string {
	switch string(b) {
	case "thread.started":
		return "thread.started"
	case "turn.started":
		return "turn.started"
	case "item.started":
		return "item.started"
	case "item.updated":
		return "item.updated"
	case "item.completed":
		return "item.completed"
	case "turn.completed":
		return "turn.completed"
	case "turn.failed":
		return "turn.failed"
	case "error":
		return "error"
	case "agent_message":
		return "agent_message"
	case "reasoning":
		return "reasoning"
	case "command_execution":
		return "command_execution"
	case "file_change":
		return "file_change"
	case "mcp_tool_call":
		return "mcp_tool_call"
	case "web_search":
		return "web_search"
	case "collab_tool_call":
		return "collab_tool_call"
	case "todo_list":
		return "todo_list"
	case "in_progress":
		return "in_progress"
	case "completed":
		return "completed"
	case "failed":
		return "failed"
	case "declined":
		return "declined"
	}
	return ""
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
	v := f.s.Value()
	if v == nil {
		return false
	}
	switch v.Kind() {
	case 'n':
		*p = nil
		return true
	case '0':
		var ok bool
		if *n, ok = jsonscan.ParseInt64(v); ok {
			*p = n
		}
		return ok
	}
	return false
}
