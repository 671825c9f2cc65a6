package main

import (
	"bytes"
	"context"
	"encoding/json/jsontext"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"sync"
	"time"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/safefile"
	"github.com/cursorkit/cursorkit/mcpstage"
)

// maxMCPServerFile bounds the --mcp-server file.
const maxMCPServerFile = 1 << 20

// Warning codes of a turn with --mcp-server.
const (
	// warnMCPHeartbeat: renewing the lease failed; the turn goes on (a
	// lease lives mcpstage.LeaseTTL after its last heartbeat).
	warnMCPHeartbeat = "mcp_heartbeat"
	// warnMCPRelease: the staged entry could not be removed after the
	// turn; `cursorkit mcp reconcile` removes it once this process is gone.
	warnMCPRelease = "mcp_release"
)

// envMCPHeartbeat sets how often a turn's lease is renewed (a Go
// duration below mcpstage.LeaseTTL; mcpstage.HeartbeatEvery otherwise).
const envMCPHeartbeat = "CURSORKIT_MCP_HEARTBEAT"

// mcpHeartbeatEvery is the renewal period this command uses.
func (a *app) mcpHeartbeatEvery() time.Duration {
	if d := envDuration(a.getenv, envMCPHeartbeat, mcpstage.HeartbeatEvery); d < mcpstage.LeaseTTL {
		return d
	}
	return mcpstage.HeartbeatEvery
}

// mcpReleaseTimeout bounds the release after the turn, which runs on a
// fresh context: the turn's may be cancelled (a stop signal) by then.
const mcpReleaseTimeout = 10 * time.Second

// readMCPServer reads the --mcp-server file: one JSON object with the
// members command (a string), args (an array of strings) and env (an
// object of strings); no other member. A file that cannot be read or has
// another shape is failure.Input. Messages name the member that is wrong,
// never a value (env often holds secrets).
func readMCPServer(path string) (mcpstage.Entry, error) {
	var e mcpstage.Entry
	bad := func(format string, args ...any) error {
		return failure.New(failure.Input, "--mcp-server file %s: %s", strconv.Quote(path), fmt.Sprintf(format, args...))
	}
	data, err := safefile.Read(path, maxMCPServerFile)
	if err != nil {
		var tooLarge *safefile.TooLargeError
		var notRegular *safefile.NotRegularError
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return e, bad("it does not exist")
		case errors.As(err, &tooLarge):
			return e, bad("it is larger than %d bytes", maxMCPServerFile)
		case errors.As(err, &notRegular):
			return e, bad("it is not a regular file")
		}
		return e, failure.Wrap(failure.Input, err, "reading the --mcp-server file %s", strconv.Quote(path))
	}
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	if _, err := dec.ReadValue(); err != nil {
		var se *jsontext.SyntacticError
		if errors.As(err, &se) {
			if errors.Is(err, jsontext.ErrDuplicateName) {
				return e, bad("a member is given twice (at byte offset %d)", se.ByteOffset)
			}
			return e, bad("it is not valid JSON (at byte offset %d)", se.ByteOffset)
		}
		return e, bad("it is not valid JSON")
	}
	if _, err := dec.ReadToken(); err == nil {
		return e, bad("it holds more than one JSON value")
	}
	dec = jsontext.NewDecoder(bytes.NewReader(data))
	if tok, _ := dec.ReadToken(); tok.Kind() != '{' {
		return e, bad(`it must hold one JSON object {"command": ..., "args": [...], "env": {...}}`)
	}
	seen := false
	for dec.PeekKind() == '"' {
		tok, _ := dec.ReadToken()
		member := tok.String() // valid only until the next read
		val, _ := dec.ReadValue()
		switch member {
		case "command":
			if val.Kind() != '"' {
				return e, bad(`"command" must be a string`)
			}
			e.Command = stringOf(val)
			seen = true
		case "args":
			args, ok := stringsOf(val)
			if !ok {
				return e, bad(`"args" must be an array of strings`)
			}
			e.Args = args
		case "env":
			env, ok := stringMapOf(val)
			if !ok {
				return e, bad(`"env" must be an object whose values are strings`)
			}
			e.Env = env
		default:
			return e, bad("unknown member %s (want command, args and env)", boundedQuote(member, 64))
		}
	}
	if !seen {
		return e, bad(`"command" is missing`)
	}
	return e, nil
}

// stringOf is the string a valid JSON string value holds.
func stringOf(v jsontext.Value) string {
	tok, _ := jsontext.NewDecoder(bytes.NewReader(v)).ReadToken()
	return tok.String()
}

// stringsOf reads an array of strings; null is none.
func stringsOf(v jsontext.Value) ([]string, bool) {
	if v.Kind() == 'n' {
		return nil, true
	}
	if v.Kind() != '[' {
		return nil, false
	}
	dec := jsontext.NewDecoder(bytes.NewReader(v))
	dec.ReadToken()
	out := []string{}
	for dec.PeekKind() != ']' {
		el, _ := dec.ReadValue()
		if el.Kind() != '"' {
			return nil, false
		}
		out = append(out, stringOf(el))
	}
	return out, true
}

// stringMapOf reads an object of strings; null is none.
func stringMapOf(v jsontext.Value) (map[string]string, bool) {
	if v.Kind() == 'n' {
		return nil, true
	}
	if v.Kind() != '{' {
		return nil, false
	}
	dec := jsontext.NewDecoder(bytes.NewReader(v))
	dec.ReadToken()
	out := map[string]string{}
	for dec.PeekKind() == '"' {
		tok, _ := dec.ReadToken()
		name := tok.String() // valid only until the next read
		el, _ := dec.ReadValue()
		if el.Kind() != '"' {
			return nil, false
		}
		out[name] = stringOf(el)
	}
	return out, true
}

// boundedQuote quotes s, cut to max bytes.
func boundedQuote(s string, max int) string {
	if len(s) <= max {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:max]) + "…"
}

// mcpLease is the MCP server a turn staged: heartbeated while the turn
// runs, released once the agent's tree is gone.
type mcpLease struct {
	stager *mcpstage.Stager
	lease  mcpstage.Lease

	stopBeat context.CancelFunc
	beatDone chan struct{}

	mu       sync.Mutex
	warnings []event.Warning
}

// stageMCP stages entry into the worktree of dir ("" is the current
// directory) under a new lease. Its failures are mcpstage's: setup (a
// tracked or unsafe config, a quarantine), resource (the lock is busy),
// input.
func stageMCP(ctx context.Context, dir string, entry mcpstage.Entry) (*mcpLease, error) {
	if dir == "" {
		dir = "."
	}
	s, err := mcpstage.New(ctx, dir, mcpstage.Options{})
	if err != nil {
		return nil, err
	}
	lease, err := s.Stage(ctx, entry)
	if err != nil {
		return nil, err
	}
	return &mcpLease{stager: s, lease: lease}, nil
}

// heartbeat renews the lease every period until ctx ends or
// stopHeartbeat is called. A failed renewal is a warning (onWarn, and the
// turn's outcome), never the end of the turn.
func (m *mcpLease) heartbeat(ctx context.Context, every time.Duration, onWarn func(event.Warning)) {
	ctx, m.stopBeat = context.WithCancel(ctx)
	m.beatDone = make(chan struct{})
	go func() {
		defer close(m.beatDone)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if err := m.stager.Heartbeat(ctx, m.lease.ID); err != nil && ctx.Err() == nil {
				w := event.Warning{Code: warnMCPHeartbeat, Message: fmt.Sprintf("renewing the MCP server lease %s failed: %v", m.lease.ID, err)}
				m.warn(w)
				onWarn(w)
			}
		}
	}()
}

// stopHeartbeat stops the renewals and waits for the last one to end.
func (m *mcpLease) stopHeartbeat() {
	if m.stopBeat != nil {
		m.stopBeat()
		<-m.beatDone
		m.stopBeat = nil
	}
}

// release removes the staged entry, on a fresh context bounded by
// mcpReleaseTimeout (the turn's may be cancelled). When that fails (the
// lock stays busy, the time is up), ReleaseOnExit makes the process-exit
// backstop's one attempt, which never waits and never writes while a peer
// holds the lock; what is still left is a warning: reconcile drops a lease
// whose owner is gone.
func (m *mcpLease) release(ctx context.Context) {
	m.stopHeartbeat()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mcpReleaseTimeout)
	defer cancel()
	err := m.stager.Release(rctx, m.lease.ID)
	if err != nil && !failure.Is(err, failure.Input) { // Input: the lease is gone already
		err = m.stager.ReleaseOnExit(m.lease.ID)
	}
	if err != nil {
		m.warn(event.Warning{Code: warnMCPRelease, Message: fmt.Sprintf("removing the staged MCP server %s failed (%s: %v); `cursorkit mcp reconcile --cwd %s` removes it once this process is gone",
			m.lease.Key, failure.KindOf(err), err, m.stager.Root())})
	}
}

func (m *mcpLease) warn(w event.Warning) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.warnings = append(m.warnings, w)
}

// takeWarnings returns the warnings so far, once.
func (m *mcpLease) takeWarnings() []event.Warning {
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.warnings
	m.warnings = nil
	return w
}
