package codex

import (
	"encoding/json/jsontext"
	"errors"
	"strconv"
	"strings"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/mcpbridge"
	"github.com/cursorkit/cursorkit/turn"
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

// decoder follows one turn's stdout, `codex exec --json`, line by line: it
// enforces the stream protocol and the turn's tool policy and turns each
// line into events (see the package documentation). It implements
// turn.Decoder. A decoder is not safe for concurrent use.
type decoder struct {
	s      turn.Stream
	allow  allowlist
	bridge *mcpbridge.Server   // the turn's MCP tool bridge, nil when none
	fatal  error               // the first top-level error Codex does not retry
	said   map[string]struct{} // agent_message and reasoning items already emitted, by id
	last   string              // the last agent_message's text: the result's
	wire   wireItem            // the item being read
	ev     itemEvent           // the event being read, its item wire: kept, as wire, so a line allocates neither
}

// NewDecoder returns the decoder for the turn t, which allows the tools of
// t.Mode and t.Tools, and those t.Bridge publishes: an mcp_tool_call of
// the bridge's server is reported by the tool's own name (its registered
// name, without the bridge's prefix), its arguments as the args and its
// result's text as the result; one of a tool the bridge does not publish
// is a policy failure, whatever t.Tools allow. An unknown mode or tool
// name, or a bridge Args refuses, is a failure.Input error.
func NewDecoder(t Turn) (turn.Decoder, error) {
	mode, err := t.Mode.Resolve()
	if err != nil {
		return nil, err
	}
	allow, err := newAllowlist(mode, t.Tools)
	if err != nil {
		return nil, err
	}
	if t.Bridge != nil {
		if _, err := bridgeArgs(t.Bridge); err != nil {
			return nil, err
		}
	}
	return &decoder{
		s: turn.Stream{Agent: Name, Format: "codex exec --json", First: "a thread.started event",
			Final: "a turn.completed or turn.failed event", Classify: ClassifyMessage},
		allow:  allow,
		bridge: t.Bridge,
		said:   map[string]struct{}{},
	}, nil
}

// Feed decodes raw, the next stdout line (its terminator and the space
// around it are removed; a blank line yields nothing), and returns its
// events, in order. Feed keeps nothing of raw; the events are the
// caller's to keep.
//
// A non-nil error is a *failure.Error: failure.Protocol or failure.Policy,
// or failure.Network when Codex says it is waiting for the network (it
// would wait forever). The turn has failed and the caller must stop the
// agent's process tree now. It is sticky.
func (d *decoder) Feed(raw []byte) ([]event.Event, error) {
	line, ok, err := d.s.Next(raw)
	if !ok {
		return nil, err
	}
	typ, _, banner, err := d.s.Head(line)
	if banner != nil || err != nil {
		return banner, err
	}
	if !d.s.Started() && typ != "thread.started" {
		return nil, d.s.NotFirst(typ)
	}
	evs, err := d.event(typ, line)
	if err != nil {
		return nil, d.s.Fail(err)
	}
	return evs, nil
}

// event maps the line of an event of type typ.
func (d *decoder) event(typ string, line []byte) ([]event.Event, error) {
	switch typ {
	case "thread.started":
		ev, err := decode[threadStarted](&d.s, line, typ)
		if err != nil {
			return nil, err
		}
		// The stream names no model, cwd or sandbox: only the thread.
		return d.s.Init(&event.Init{SessionID: ev.ThreadID}, typ, "", line), nil
	case "turn.started":
		return nil, nil // says nothing the caller needs
	case "item.started", "item.updated", "item.completed":
		d.wire = wireItem{}
		d.ev = itemEvent{Item: itemRef{it: &d.wire}}
		if _, err := d.s.Unmarshal(line, &d.ev, typ); err != nil {
			return nil, err
		}
		if !d.ev.Item.ok {
			return nil, d.s.Protocol(-1, line, turn.Quote(typ, 40)+` event: field "/item" is missing`)
		}
		errs := d.wire.members()
		if err := d.s.Invalid(line, typ, errs[:]...); err != nil {
			return nil, err
		}
		return d.item(&d.wire, typ, line)
	case "turn.completed":
		ev, err := decode[turnCompleted](&d.s, line, typ)
		if err != nil {
			return nil, err
		}
		return d.completed(ev.Usage), nil
	case "turn.failed":
		ev, err := decode[turnFailed](&d.s, line, typ)
		if err != nil {
			return nil, err
		}
		return d.failed(ev), nil
	case "error":
		ev, err := decode[errorEvent](&d.s, line, typ)
		if err != nil {
			return nil, err
		}
		return d.topError(ev.Message)
	}
	return d.s.Pass(typ, "", line)
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
func (d *decoder) topError(msg string) ([]event.Event, error) {
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
		if k := ClassifyMessage(cause); k != failure.Unclassified {
			r.Kind = k
		}
	}
	return turn.RetryWarning(r, cause)
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
func (d *decoder) completed(u *wireUsage) []event.Event {
	res := &event.Result{Subtype: "success", Text: d.last}
	if u != nil {
		res.Usage = usage(u)
	}
	// Codex exits 1 after a fatal error even when the turn completed.
	d.s.Finish(res, d.fatal)
	return []event.Event{{Type: event.TypeResult, Result: res}}
}

// failed maps turn.failed: the error result, the turn failing with its
// message's kind.
func (d *decoder) failed(ev *turnFailed) []event.Event {
	var msg string
	if ev.Error != nil {
		msg = ev.Error.Message
	}
	res := &event.Result{Subtype: "error", IsError: true, Text: msg}
	d.s.Finish(res, messageFailure("codex reported that the turn failed", msg))
	return []event.Event{{Type: event.TypeResult, Result: res}}
}

// usage reads turn.completed's usage. OpenAI's input_tokens include the
// cached input tokens (codex-rs TokenUsage::non_cached_input is
// input_tokens - cached_input_tokens, floored at 0), while
// event.Usage.InputTokens excludes cache reads: InputTokens is input -
// cached, CacheReadTokens is cached. Codex reports no cache writes.
func usage(u *wireUsage) event.Usage {
	us := event.Usage{Reported: true, CacheReadTokens: u.CachedInputTokens, OutputTokens: u.OutputTokens}
	if u.InputTokens != nil {
		in := *u.InputTokens
		if u.CachedInputTokens != nil {
			in = max(in-*u.CachedInputTokens, 0)
		}
		us.InputTokens = &in
	}
	return us
}

// item maps the item of an event of type typ: item.started,
// item.updated or item.completed.
func (d *decoder) item(it *wireItem, typ string, line []byte) ([]event.Event, error) {
	phase := strings.TrimPrefix(typ, "item.")
	switch it.Type {
	case "agent_message":
		text := it.Text.Value()
		if phase != "completed" || text == "" || !d.firstSaid(it.ID) {
			return nil, nil // the text comes once, on item.completed
		}
		d.last = text
		return []event.Event{{Type: event.TypeText, Text: text}}, nil
	case "reasoning":
		if phase != "completed" || !d.firstSaid(it.ID) {
			return nil, nil
		}
		return []event.Event{{Type: event.TypeThinking, Subtype: "delta", Text: it.Text.Value()},
			{Type: event.TypeThinking, Subtype: "completed"}}, nil
	case "error":
		if phase != "completed" {
			return nil, nil
		}
		return []event.Event{{Type: event.TypeWarning, Warning: &event.Warning{Code: WarnItemError,
			Message: detail.Cut(detail.Bound(it.Message.Value()), maxAgentMessage)}}}, nil
	}
	if name, server, ok := it.tool(); ok {
		return d.tool(it, name, server, phase)
	}
	// todo_list, plan and item types this decoder does not know pass on
	// whole: they are not tool calls Codex documents.
	return []event.Event{turn.Unknown(typ, "", line)}, nil
}

// firstSaid records that the item id was said and reports whether it is
// the first time (always, for an item without an id).
func (d *decoder) firstSaid(id string) bool {
	if id == "" {
		return true
	}
	n := len(d.said)
	d.said[id] = struct{}{} // one lookup: the map grows when id is new
	return len(d.said) > n
}

// tool maps a tool item: every phase is checked against the policy; the
// first item.started of an id is tool_started, item.completed is
// tool_completed, item.updated says nothing new.
//
// A call of the bridge's server is the bridge's alone: allowed when the
// bridge publishes its tool, and then named and filled as that tool.
func (d *decoder) tool(it *wireItem, name, server, phase string) ([]event.Event, error) {
	t := &event.Tool{CallID: it.ID, Name: name}
	fill := it.fill
	var own string
	var onServer, published bool
	if it.Type == "mcp_tool_call" {
		own, onServer, published = bridgedTool(d.bridge, server, jsontext.Value(it.Tool.Value()))
	}
	var refused *failure.Error
	switch {
	case onServer && !published:
		// Refused under the name the agent called, as claude and gemini
		// refuse it.
		refused = bridgeRefused(d.bridge, jsontext.Value(it.Tool.Value()))
	case onServer:
		t.Name = own
		fill = func(t *event.Tool, done bool) { fillBridged(it, t, done) }
	default:
		refused = d.allow.check(name, server)
	}
	if refused != nil {
		return nil, d.s.StartTool(t, refused)
	}
	switch phase {
	case "started":
		if d.s.Tool(it.ID) != nil {
			return nil, nil // said again
		}
		fill(t, false)
		return []event.Event{{Type: event.TypeToolStarted, Tool: t}}, d.s.StartTool(t, nil)
	case "completed":
		d.s.CompleteTool(it.ID)
		fill(t, true)
		return []event.Event{{Type: event.TypeToolCompleted, Tool: t}}, nil
	}
	return nil, nil
}

// Done reports whether the turn's final event (turn.completed or
// turn.failed) has arrived.
func (d *decoder) Done() bool { return d.s.Done() }

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
//     repository check is failure.Setup) and what to do about it, the
//     tail without its terminal escapes as the detail.
func (d *decoder) End(exitCode int, stderrTail string) error {
	switch {
	case d.s.Err() != nil || d.s.Done():
		return d.s.End(exitCode, stderrTail)
	case exitCode != 0 && d.fatal != nil:
		return d.fatal
	}
	err := d.s.End(exitCode, stderrTail)
	var fe *failure.Error
	if tail := strings.TrimSpace(stderrTail); exitCode != 0 && tail != "" && errors.As(err, &fe) {
		// fe.Kind is failure.Process unless ClassifyMessage found one.
		if fix := fixOf(fe.Kind, tail); fix != "" {
			fe.Message += " (" + fix + ")"
		}
		// Codex colours its stderr: the detail is quoted without escapes.
		fe.Detail = "stderr: " + detail.CutStart(detail.StripANSI(tail), maxAgentMessage)
	}
	return err
}
