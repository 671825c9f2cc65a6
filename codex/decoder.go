package codex

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/cursorkit/cursorkit/agent"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/internal/jsonscan"
)

// Warning codes of the Codex decoder.
const (
	// WarnItemError: a non-fatal error Codex reported as an error item
	// (a transport fallback, a config or deprecation notice).
	WarnItemError = "codex_item_error"
	// WarnError: a top-level error event Codex does not retry; the turn
	// fails with it (End), once Codex has ended the turn.
	WarnError = "codex_error"
)

// Decoder follows one turn's stdout, `codex exec --json`, line by line: it
// enforces the stream protocol and the turn's tool policy and turns each
// line into events (see the package documentation). It implements
// agent.Decoder. A Decoder is not safe for concurrent use.
type Decoder struct {
	allow allowlist
	line  int // lines fed so far, blank ones included

	init      bool
	result    *event.Result
	resultErr error // the failure a turn.failed (or an earlier fatal error) reports
	fatal     error // the first top-level error Codex does not retry
	err       error // a protocol, policy or network failure Feed returned; sticky

	said    idSet               // agent_message and reasoning items already emitted, by id
	last    string              // the last agent_message's text: the result's
	started map[string]struct{} // tool items started and not completed, by id

	lines *lineReader
}

// NewDecoder returns a Decoder for the turn t, which allows the tools of
// t.Mode and t.Tools. An unknown mode or tool name is a failure.Input
// error.
func NewDecoder(t Turn) (*Decoder, error) {
	mode, err := t.Mode.Resolve()
	if err != nil {
		return nil, err
	}
	allow, err := newAllowlist(mode, t.Tools)
	if err != nil {
		return nil, err
	}
	return &Decoder{allow: allow, started: map[string]struct{}{}, lines: newLineReader()}, nil
}

// Feed decodes the next stdout line (a trailing "\n" or "\r\n" is
// removed; blank lines yield nothing) and returns its events, in order.
// Feed keeps nothing of line; the events are the caller's to keep.
//
// A non-nil error is a *failure.Error: failure.Protocol or failure.Policy,
// or failure.Network when Codex says it is waiting for the network (it
// would wait forever). The turn has failed and the caller must stop the
// agent's process tree now. It is sticky.
func (d *Decoder) Feed(line []byte) ([]event.Event, error) {
	if d.err != nil {
		return nil, d.err
	}
	d.line++
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(trimSpace(line)) == 0 {
		return nil, nil
	}
	if d.result != nil {
		return nil, d.fail(d.protocol(0, line, "output after the turn's final event"))
	}
	w, bad := d.lines.decode(line)
	switch {
	case bad == nil:
	case bad.notJSON && !d.init:
		return []event.Event{{Type: event.TypeWarning, Warning: &event.Warning{Code: event.WarnBanner,
			Message: fmt.Sprintf("ignored line %d before the first event (not JSON): %s", d.line, excerpt(line, 0))}}}, nil
	case bad.notJSON || bad.inType:
		return nil, d.fail(d.protocol(bad.offset, line, bad.reason))
	}
	if !d.init && w.Type != "thread.started" {
		return nil, d.fail(d.protocol(-1, nil, "the first event is of type "+agent.Quote(w.Type, 40)+", not thread.started"))
	}
	if bad != nil {
		return nil, d.fail(d.protocol(bad.offset, line, w.Type+" event: "+bad.reason))
	}
	evs, err := d.event(w, line)
	if err != nil {
		return nil, d.fail(err)
	}
	return evs, nil
}

// event maps one well-formed line; the first is thread.started.
func (d *Decoder) event(w *wireLine, line []byte) ([]event.Event, error) {
	typ := w.Type
	if !d.init {
		d.init = true
		// The stream names no model, cwd or sandbox: only the thread.
		return []event.Event{{Type: event.TypeInit, Init: &event.Init{SessionID: w.ThreadID}}}, nil
	}
	switch typ {
	case "thread.started":
		return []event.Event{
			{Type: event.TypeWarning, Warning: &event.Warning{Code: event.WarnDuplicateInit,
				Message: fmt.Sprintf("line %d: a second thread.started event (thread %s)", d.line, agent.Quote(w.ThreadID, 64))}},
			unknown(typ, line)}, nil
	case "turn.started":
		return nil, nil // known; says nothing the caller needs
	case "item.started", "item.updated", "item.completed":
		return d.item(&w.Item, strings.TrimPrefix(typ, "item."), typ, line)
	case "turn.completed":
		return d.completed(w.Usage), nil
	case "turn.failed":
		var msg string
		if w.Error != nil {
			msg = w.Error.Message
		}
		d.result = &event.Result{Subtype: "error", IsError: true, Text: msg}
		d.resultErr = messageFailure("codex reported that the turn failed", msg)
		return []event.Event{{Type: event.TypeResult, Result: d.result}}, nil
	case "error":
		return d.topError(w.Message)
	}
	return []event.Event{unknown(typ, line)}, nil
}

// reconnecting is the prefix of Codex's retry notices ("Reconnecting...
// 2/5 (...)") and of its wait for the network ("Reconnecting... waiting
// for network (...)").
const reconnecting = "Reconnecting..."

// topError maps a top-level error event. Codex emits one for every error
// notification, whether it will retry or not; the stream does not carry
// will_retry, so the text decides: "Reconnecting... N/M" is a retry (a
// warning); "Reconnecting... waiting for network" means Codex waits for
// the network with no bound (it never exits by itself), so the turn fails
// as failure.Network at once; any other error is fatal (Codex then exits
// 1): a warning now, and the turn's verdict once Codex ends the turn.
func (d *Decoder) topError(msg string) ([]event.Event, error) {
	rest, retry := strings.CutPrefix(msg, reconnecting)
	rest = strings.TrimSpace(rest)
	switch {
	case retry && strings.HasPrefix(rest, "waiting for network"):
		fe := messageFailure("codex is waiting for the network, which it would do forever", msg)
		fe.Kind = failure.Network
		return nil, fe
	case retry:
		return []event.Event{retryWarning(rest)}, nil
	}
	if d.fatal == nil {
		d.fatal = messageFailure("codex reported an error", msg)
	}
	return []event.Event{{Type: event.TypeWarning, Warning: &event.Warning{Code: WarnError, Message: detail.Cut(detail.Bound(msg), maxAgentMessage)}}}, nil
}

// retryWarning is the retry warning of a "Reconnecting... N/M (CAUSE)"
// notice, given what follows "Reconnecting...": the attempt and the most
// from N/M, the status from the cause's "last status: NNN" or "status
// NNN", the kind from the status, else from the cause's words, else
// network (a stream that broke has no status).
func retryWarning(rest string) event.Event {
	var r event.Retry
	counts, cause, _ := strings.Cut(rest, " ")
	if n, m, ok := strings.Cut(counts, "/"); ok {
		r.Attempt, _ = strconv.Atoi(n)
		r.Max, _ = strconv.Atoi(m)
	}
	cause = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(cause), "("), ")")
	r.Status = statusIn(cause)
	if r.Status == 0 {
		if k := ClassifyMessage(cause); k != failure.Other {
			r.Kind = k
		}
	}
	return agent.RetryWarning(r, cause)
}

// statusIn returns the HTTP status a Codex message names ("last status:
// 429 Too Many Requests", "unexpected status 401 Unauthorized"), 0 when
// it names none.
func statusIn(msg string) int {
	for _, marker := range []string{"last status: ", "status "} {
		if _, after, ok := strings.Cut(msg, marker); ok && len(after) >= 3 {
			if n, err := strconv.Atoi(after[:3]); err == nil && n >= 100 && n <= 599 {
				return n
			}
		}
	}
	return 0
}

// completed maps turn.completed: the result, with its usage and the last
// agent message's text (Codex's final answer).
func (d *Decoder) completed(u *wireUsage) []event.Event {
	res := &event.Result{Subtype: "success", Text: d.last}
	if u != nil {
		res.Usage = usage(u)
	}
	d.result = res
	if d.fatal != nil {
		// Codex exits 1 after a fatal error even when the turn completed.
		d.resultErr = d.fatal
	}
	return []event.Event{{Type: event.TypeResult, Result: res}}
}

// usage reads turn.completed's usage. OpenAI's input_tokens include the
// cached input tokens (codex-rs TokenUsage::non_cached_input is
// input_tokens - cached_input_tokens, floored at 0), while
// event.Usage.InputTokens excludes cache reads: InputTokens is input -
// cached, CacheReadTokens is cached. Codex reports no cache writes.
func usage(u *wireUsage) event.Usage {
	us := event.Usage{Reported: true}
	if u.InputTokens != nil {
		in := *u.InputTokens
		if u.CachedInputTokens != nil {
			in = max(in-*u.CachedInputTokens, 0)
		}
		us.InputTokens = &in
	}
	if u.CachedInputTokens != nil {
		cached := *u.CachedInputTokens
		us.CacheReadTokens = &cached
	}
	if u.OutputTokens != nil {
		out := *u.OutputTokens
		us.OutputTokens = &out
	}
	return us
}

// item maps an item event; phase is started, updated or completed.
func (d *Decoder) item(it *wireItem, phase, typ string, line []byte) ([]event.Event, error) {
	id := it.ID
	switch it.Type {
	case "agent_message":
		if phase != "completed" || it.Text == "" || !d.firstSaid(it.id) {
			return nil, nil // the text comes once, on item.completed
		}
		d.last = it.Text
		return []event.Event{{Type: event.TypeText, Text: it.Text}}, nil
	case "reasoning":
		if phase != "completed" || !d.firstSaid(it.id) {
			return nil, nil
		}
		return []event.Event{{Type: event.TypeThinking, Subtype: "delta", Text: it.Text},
			{Type: event.TypeThinking, Subtype: "completed"}}, nil
	case "error":
		if phase != "completed" {
			return nil, nil
		}
		return []event.Event{{Type: event.TypeWarning, Warning: &event.Warning{Code: WarnItemError, Message: detail.Cut(detail.Bound(it.Message), maxAgentMessage)}}}, nil
	}
	name, server, ok := toolOf(it)
	if !ok {
		// todo_list, plan and item types this decoder does not know pass on
		// whole: they are not tool calls Codex documents.
		return []event.Event{unknown(typ, line)}, nil
	}
	if fe := d.allow.check(name, server); fe != nil {
		return nil, fe.WithDetail(fmt.Sprintf("line %d, item %s", d.line, agent.Quote(id, 64)))
	}
	switch phase {
	case "started":
		if _, dup := d.started[id]; dup {
			return nil, nil
		}
		d.started[id] = struct{}{}
		return toolEvent(event.TypeToolStarted, id, name, it, false), nil
	case "completed":
		delete(d.started, id)
		return toolEvent(event.TypeToolCompleted, id, name, it, true), nil
	}
	return nil, nil // item.updated: checked, nothing new to say
}

// firstSaid records that the item id was said and reports whether it is
// the first time (always, for an item without an id).
func (d *Decoder) firstSaid(id []byte) bool {
	return len(id) == 0 || d.said.add(id)
}

// idSet is a set of item ids. A turn says hundreds of thousands of
// items. Codex numbers its own items "item_N" from a counter
// (codex-rs/exec/src/event_processor_with_jsonl_output.rs): N is kept
// as a bit of a bitmap, which costs a bit an item and no hashing. Another
// id of up to maxShortID bytes is kept inline in a key without pointers, which the
// garbage collector need not scan and the map moves without write
// barriers as it grows; a longer one is kept as a string.
type idSet struct {
	items []uint64 // bit N: "item_N"
	short map[shortID]struct{}
	long  map[string]struct{}
}

// maxItemNumber bounds the N of "item_N" kept in the bitmap (512 KiB at
// most); a larger one is kept as any other id.
const maxItemNumber = 1<<22 - 1

// itemNumber returns N of an id "item_N" (N in decimal, without leading
// zeros, at most maxItemNumber).
func itemNumber(id []byte) (int, bool) {
	digits, ok := bytes.CutPrefix(id, []byte("item_"))
	if !ok || len(digits) == 0 || digits[0] == '-' {
		return 0, false
	}
	// A JSON integer without a sign: no leading zeros, digits only.
	n, ok := jsonscan.ParseInt64(digits)
	return int(n), ok && n <= maxItemNumber
}

// maxShortID is the longest id a shortID holds.
const maxShortID = 15

// shortID is an id of up to maxShortID bytes, zero-padded, its length in
// its last byte: two ids are equal exactly when their shortIDs are.
type shortID [maxShortID + 1]byte

// add adds id to s and reports whether it was not in s already.
func (s *idSet) add(id []byte) bool {
	if n, ok := itemNumber(id); ok {
		word, bit := n/64, uint64(1)<<(n%64)
		if word >= len(s.items) {
			s.items = append(s.items, make([]uint64, word+1-len(s.items))...)
		}
		if s.items[word]&bit != 0 {
			return false
		}
		s.items[word] |= bit
		return true
	}
	if len(id) <= maxShortID {
		if s.short == nil {
			s.short = map[shortID]struct{}{}
		}
		var k shortID
		copy(k[:], id)
		k[maxShortID] = byte(len(id))
		n := len(s.short)
		s.short[k] = struct{}{}
		return len(s.short) > n
	}
	if s.long == nil {
		s.long = map[string]struct{}{}
	}
	if _, ok := s.long[string(id)]; ok {
		return false
	}
	s.long[string(id)] = struct{}{}
	return true
}

// toolOf returns the tool a tool item calls and for an MCP call its
// server; ok is false for an item that is no tool.
func toolOf(it *wireItem) (name, server string, ok bool) {
	switch it.Type {
	case "command_execution":
		return ToolShell, "", true
	case "file_change":
		return ToolFileChange, "", true
	case "mcp_tool_call":
		return ToolMCP, it.server, true
	case "web_search":
		return ToolWebSearch, "", true
	case "collab_tool_call":
		return ToolCollab, "", true
	}
	return "", "", false
}

// toolEvent returns the one event of type typ of the tool item it, which
// calls name: its args, and when done its status and result (a started
// tool has neither). The tool's values are copies: the item's raw values
// are reused. The event and its tool take one allocation.
func toolEvent(typ event.Type, id, name string, it *wireItem, done bool) []event.Event {
	b := new(struct {
		evs  [1]event.Event
		tool event.Tool
	})
	t := &b.tool
	t.CallID, t.Name = id, name
	switch it.Type {
	case "command_execution":
		t.Args = buildObject(member{"command", it.Command})
		if done {
			t.Status = it.Status
			if len(it.ExitCode) > 0 || len(it.AggregatedOutput) > 0 {
				t.Result = buildObject(member{"exit_code", it.ExitCode}, member{"aggregated_output", it.AggregatedOutput})
			}
		}
	case "file_change":
		t.Args = buildObject(member{"changes", it.Changes})
		if done {
			t.Status = it.Status
		}
	case "mcp_tool_call":
		t.Args = buildObject(member{"server", it.Server}, member{"tool", it.Tool}, member{"arguments", it.Arguments})
		if done {
			t.Status = it.Status
			if len(it.Result) > 0 || len(it.Error) > 0 {
				t.Result = buildObject(member{"result", it.Result}, member{"error", it.Error})
			}
		}
	case "web_search":
		t.Args = buildObject(member{"query", it.Query}, member{"action", it.Action})
	case "collab_tool_call":
		// Sub-agents: the tool and the threads only (its prompt is not
		// copied: it may quote the user's).
		t.Args = buildObject(member{"tool", it.Tool}, member{"receiver_thread_ids", it.ReceiverThreadIDs})
		if done {
			t.Status = it.Status
			if len(it.AgentsStates) > 0 {
				t.Result = bytes.Clone(it.AgentsStates)
			}
		}
	}
	b.evs[0] = event.Event{Type: typ, Tool: t}
	return b.evs[:]
}

// Done reports whether the turn's final event (turn.completed or
// turn.failed) has arrived.
func (d *Decoder) Done() bool { return d.result != nil }

// End returns the turn's verdict once Codex has exited by itself with
// exitCode, given the end of its stderr. Codex exits 0 after a completed
// turn and 1 after any failure (a failed or interrupted turn, a fatal
// error, a refused start such as outside a git repository); it documents
// no other codes.
//
//   - a failure Feed returned is returned again;
//   - after the final event: nil, or the failure turn.failed (or an
//     earlier fatal error event) reports, its kind from its text;
//   - exit 0 without thread.started or without a final event:
//     failure.Protocol;
//   - a non-zero exit before the final event: the fatal error event's
//     failure when there was one, else failure.Process, with the kind
//     ClassifyMessage finds in stderrTail when it finds one (the git
//     repository check is failure.Setup).
func (d *Decoder) End(exitCode int, stderrTail string) error {
	switch {
	case d.err != nil:
		return d.err
	case d.result != nil:
		return d.resultErr
	case exitCode != 0 && d.fatal != nil:
		return d.fatal
	}
	err := agent.Unfinished{
		Agent: "codex", First: "a thread.started event", Final: "a turn.completed or turn.failed event",
		SawFirst: d.init, Lines: d.line, ExitCode: exitCode, StderrTail: stderrTail,
		Classify: ClassifyMessage,
	}.Verdict()
	if tail := strings.TrimSpace(stderrTail); exitCode != 0 && tail != "" {
		// err.Kind is failure.Process unless ClassifyMessage found one.
		if fix := fixOf(err.Kind, tail); fix != "" {
			err.Message += " (" + fix + ")"
		}
		// Codex colours its stderr: the detail is quoted without escapes.
		err.Detail = "stderr: " + detail.CutStart(detail.StripANSI(tail), maxAgentMessage)
	}
	return err
}

func (d *Decoder) fail(err error) error {
	d.err = err
	return err
}

// unknown is the event for a line passed on whole.
func unknown(typ string, line []byte) event.Event {
	return event.Event{Type: event.TypeUnknown, Unknown: &event.Unknown{Type: typ, Raw: bytes.Clone(trimSpace(line))}}
}

// trimSpace returns line without the JSON whitespace around it.
func trimSpace(line []byte) []byte {
	for len(line) > 0 && isSpace(line[0]) {
		line = line[1:]
	}
	for len(line) > 0 && isSpace(line[len(line)-1]) {
		line = line[:len(line)-1]
	}
	return line
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// protocol builds a failure.Protocol error for the current line. With a
// line, the message names the byte offset and the detail quotes a
// bounded excerpt around it, unless the line may hold the prompt.
func (d *Decoder) protocol(offset int, line []byte, reason string) error {
	msg := "codex exec --json protocol violation at line " + strconv.Itoa(d.line)
	if line != nil {
		msg += ", byte offset " + strconv.Itoa(offset)
	}
	e := &failure.Error{Kind: failure.Protocol, Message: msg + ": " + reason}
	if line != nil {
		e.Detail = "excerpt: " + excerpt(line, offset)
	}
	return e
}

// excerptWidth bounds the excerpt of a bad line.
const excerptWidth = 80

// excerpt quotes at most excerptWidth bytes of line around offset. Codex's
// stream never echoes the prompt, but a sub-agent call carries a prompt
// that may quote it: a line that mentions "prompt" is never quoted.
func excerpt(line []byte, offset int) string {
	if bytes.Contains(bytes.ToLower(line), []byte("prompt")) {
		return "(withheld: the line may hold the prompt)"
	}
	start := max(0, min(offset, len(line))-excerptWidth/2)
	end := min(len(line), start+excerptWidth)
	s := strconv.Quote(strings.ToValidUTF8(string(line[start:end]), "\uFFFD"))
	if start > 0 {
		s = "…" + s
	}
	if end < len(line) {
		s += "…"
	}
	return s
}
