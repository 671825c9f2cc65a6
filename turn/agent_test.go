package turn_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/shim"
	"github.com/cursorkit/cursorkit/supervise"
	"github.com/cursorkit/cursorkit/turn"
)

func TestMain(m *testing.M) {
	testkit.RunIfChild(script)
	os.Exit(m.Run())
}

// script is a child that echoes its stdin's first line as "prompt <line>",
// then acts out its arguments one by one:
//
//	say:TEXT        print TEXT as a line
//	err:TEXT        print TEXT on stderr
//	sleep:DURATION  wait
//	hang            block until killed
//	exit:N          exit with code N
var script = testkit.Role{Name: "script", Run: func(args []string) int {
	prompt, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	fmt.Printf("prompt %s\n", strings.TrimSpace(prompt))
	for _, a := range args {
		verb, arg, _ := strings.Cut(a, ":")
		switch verb {
		case "say":
			fmt.Println(arg)
		case "err":
			fmt.Fprintln(os.Stderr, arg)
		case "sleep":
			d, _ := time.ParseDuration(arg)
			time.Sleep(d) // the child's own pacing; the tests wait on events
		case "hang":
			testkit.SleepForever()
		case "exit":
			code, _ := strconv.Atoi(arg)
			return code
		}
	}
	return 0
}}

// lineDecoder is a Decoder of the script's lines: "prompt ..." opens the
// session, "text X" is text, "result" ends the turn, "warn X" a warning,
// "bad" a protocol error and "tool X" a policy error.
type lineDecoder struct {
	done  bool
	fed   int
	ended *endCall
}

type endCall struct {
	code int
	tail string
}

func (d *lineDecoder) Feed(line []byte) ([]event.Event, error) {
	d.fed++
	verb, arg, _ := strings.Cut(string(line), " ")
	switch verb {
	case "prompt":
		return []event.Event{{Type: event.TypeInit, Init: &event.Init{SessionID: "s-1", Model: "m"}}}, nil
	case "text":
		return []event.Event{{Type: event.TypeText, Text: arg}}, nil
	case "warn":
		return []event.Event{{Type: event.TypeWarning, Warning: &event.Warning{Code: "decoder", Message: arg}}}, nil
	case "result":
		d.done = true
		in := int64(7)
		return []event.Event{{Type: event.TypeResult, Result: &event.Result{Subtype: "success", Usage: event.Usage{Reported: true, InputTokens: &in}}}}, nil
	case "retry":
		return []event.Event{retryOf(arg)}, nil
	case "answered":
		d.done = true
		return []event.Event{{Type: event.TypeResult, Result: &event.Result{Subtype: "success", Model: arg}}}, nil
	case "bad":
		return nil, failure.New(failure.Protocol, "line %d is bad", d.fed)
	case "tool":
		return []event.Event{{Type: event.TypeText, Text: "before the tool"}}, failure.New(failure.Policy, "the tool %s is not allowed", arg)
	}
	return nil, nil
}

func (d *lineDecoder) Done() bool { return d.done }

func (d *lineDecoder) End(exitCode int, stderrTail string) error {
	d.ended = &endCall{code: exitCode, tail: stderrTail}
	switch {
	case d.done:
		return nil
	case exitCode == 0:
		return failure.New(failure.Protocol, "exited 0 without a result")
	}
	return failure.New(failure.Process, "exited with code %d", exitCode).WithDetail(strings.TrimSpace(stderrTail))
}

// retryOf is the retry warning of "N STATUS".
func retryOf(arg string) event.Event {
	n, status, _ := strings.Cut(arg, " ")
	r := event.Retry{}
	r.Attempt, _ = strconv.Atoi(n)
	r.Status, _ = strconv.Atoi(status)
	r.Kind = turn.KindOfStatus(r.Status)
	return turn.RetryWarning(r, "")
}

// stderrDecoder is a lineDecoder that also reads stderr: "retry N STATUS"
// there is a retry warning, "long" records the length of the line it got.
type stderrDecoder struct {
	lineDecoder
	longest int
}

func (d *stderrDecoder) FeedStderr(line []byte) []event.Event {
	d.longest = max(d.longest, len(line))
	if arg, ok := strings.CutPrefix(string(line), "retry "); ok {
		return []event.Event{retryOf(arg)}
	}
	return nil
}

// scriptPlan plans the test binary as the script child with args.
func scriptPlan(t *testing.T, args ...string) shim.Command {
	t.Helper()
	bin := testkit.Install(t, testkit.TempDir(t), "agent", script.Name)
	kind := discovery.POSIX
	if runtime.GOOS == "windows" {
		kind = discovery.Native
	}
	plan, err := shim.Build(discovery.Resolution{Path: bin, Name: filepath.Base(bin), Kind: kind}, args, shim.OptionsFromOS())
	require.NoError(t, err)
	return plan
}

// collect returns Options that gather every event.
func collect(events *[]event.Event) turn.Options {
	return turn.Options{
		FirstLineTimeout: time.Minute,
		IdleTimeout:      time.Minute,
		ExitGrace:        time.Minute,
		OnEvent:          func(e event.Event) { *events = append(*events, e) },
	}
}

func types(events []event.Event) []event.Type {
	var out []event.Type
	for _, e := range events {
		out = append(out, e.Type)
	}
	return out
}

func TestRunTurns(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		opts    func(*turn.Options)
		status  string
		kind    failure.Kind
		types   []event.Type
		ended   *endCall // what End was called with; nil: not called
		warning string   // a warning code the outcome must carry
	}{
		{name: "a whole turn", args: []string{"say:text hello", "say:warn careful", "say:result"},
			status: turn.StatusDone, types: []event.Type{event.TypeInit, event.TypeText, event.TypeWarning, event.TypeResult},
			ended: &endCall{}, warning: "decoder"},
		{name: "non-zero exit before the result: the decoder decides, with the stderr tail",
			args: []string{"say:text partial", "err:boom", "exit:3"}, status: turn.StatusError, kind: failure.Process,
			types: []event.Type{event.TypeInit, event.TypeText}, ended: &endCall{code: 3, tail: "boom\n"}},
		{name: "exit 0 without a result", args: []string{"say:text partial"}, status: turn.StatusError, kind: failure.Protocol,
			types: []event.Type{event.TypeInit, event.TypeText}, ended: &endCall{}},
		{name: "a protocol error stops the tree at once", args: []string{"say:bad", "hang"}, status: turn.StatusError, kind: failure.Protocol,
			types: []event.Type{event.TypeInit}},
		{name: "a policy error keeps the events before it", args: []string{"say:tool shell", "hang"}, status: turn.StatusError, kind: failure.Policy,
			types: []event.Type{event.TypeInit, event.TypeText}},
		{name: "lingering after the result is a late close", args: []string{"say:result", "hang"},
			opts:   func(o *turn.Options) { o.ExitGrace = 200 * time.Millisecond },
			status: turn.StatusDone, types: []event.Type{event.TypeInit, event.TypeResult, event.TypeWarning}, ended: &endCall{},
			warning: supervise.WarnLateClose},
		{name: "silence past the inactivity deadline", args: []string{"hang"},
			opts:   func(o *turn.Options) { o.IdleTimeout = 300 * time.Millisecond },
			status: turn.StatusError, kind: failure.Timeout, types: []event.Type{event.TypeInit}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := scriptPlan(t, tt.args...)
			var events []event.Event
			opts := collect(&events)
			if tt.opts != nil {
				tt.opts(&opts)
			}
			dec := &lineDecoder{}
			o, err := turn.Run(context.Background(), plan, "the prompt\n", dec, opts)
			assert.Equal(t, tt.status, o.Status, "%v", err)
			assert.Equal(t, tt.kind, o.Kind)
			assert.Equal(t, tt.kind, failure.KindOf(err))
			assert.Equal(t, tt.status == turn.StatusDone, err == nil)
			assert.Equal(t, tt.types, types(events), "%+v", o.Process.Warnings)
			assert.Equal(t, tt.ended, dec.ended, "End is called only when the agent exited by itself")
			assert.Equal(t, "s-1", o.SessionID)
			assert.Equal(t, "m", o.Model)
			if tt.warning != "" {
				var codes []string
				for _, w := range o.Warnings {
					codes = append(codes, w.Code)
				}
				assert.Contains(t, codes, tt.warning)
			}
			if tt.status == turn.StatusDone {
				assert.True(t, o.Usage.Reported)
				assert.Empty(t, o.Message)
			} else {
				assert.NotEmpty(t, o.Message)
			}
		})
	}
}

func TestRunSpawnFailureDeliversNothing(t *testing.T) {
	plan := scriptPlan(t)
	plan.Program += ".missing"
	var events []event.Event
	o, err := turn.Run(context.Background(), plan, "p", &lineDecoder{}, collect(&events))
	require.Error(t, err)
	assert.Equal(t, failure.MissingCLI, failure.KindOf(err))
	assert.Equal(t, supervise.SpawnFailed, o.Process.Ending)
	assert.Empty(t, events)
	assert.Equal(t, turn.StatusError, o.Status)
}

func TestRunCancel(t *testing.T) {
	plan := scriptPlan(t, "say:text started", "hang")
	ctx, cancel := context.WithCancel(context.Background())
	var events []event.Event
	opts := collect(&events)
	opts.OnEvent = func(e event.Event) {
		events = append(events, e)
		if e.Type == event.TypeText {
			cancel()
		}
	}
	o, err := turn.Run(ctx, plan, "p\n", &lineDecoder{}, opts)
	assert.Equal(t, failure.Cancelled, failure.KindOf(err))
	assert.Equal(t, turn.StatusCancelled, o.Status)
	assert.Equal(t, supervise.Cancelled, o.Process.Ending)
}

// TestRunSendsThePromptOnStdinOnly: the child sees the prompt on stdin and
// nowhere in its argv.
func TestRunSendsThePromptOnStdinOnly(t *testing.T) {
	plan := scriptPlan(t, "say:result")
	var events []event.Event
	dec := &recordingDecoder{}
	_, err := turn.Run(context.Background(), plan, "secret prompt text\n", dec, collect(&events))
	require.NoError(t, err)
	assert.Equal(t, "prompt secret prompt text", dec.first)
	assert.NotContains(t, strings.Join(plan.Args, " "), "secret")
}

type recordingDecoder struct {
	lineDecoder
	first string
}

func (d *recordingDecoder) Feed(line []byte) ([]event.Event, error) {
	if d.first == "" {
		d.first = string(line)
	}
	return d.lineDecoder.Feed(line)
}

func TestOutcomeJSON(t *testing.T) {
	in := int64(3)
	tests := []struct {
		name string
		o    turn.Outcome
		want string
	}{
		{"done", turn.Outcome{Status: turn.StatusDone, SessionID: "s", Model: "m",
			Usage: event.Usage{Reported: true, InputTokens: &in}, Warnings: []event.Warning{{Code: "late_close", Message: "stopped"}}},
			`{"type":"outcome","status":"done","kind":null,"sessionId":"s","model":"m","usage":{"reported":true,"inputTokens":3},"warnings":[{"code":"late_close","message":"stopped"}]}`},
		{"error without a session", turn.Outcome{Status: turn.StatusError, Kind: failure.Timeout, Message: "no line <within> 30s"},
			`{"type":"outcome","status":"error","kind":"timeout","message":"no line <within> 30s","sessionId":null,"usage":{"reported":false},"warnings":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, json.MarshalWrite(&b, tt.o))
			assert.Equal(t, tt.want, b.String())
			// The same through run --json's encoder.
			b.Reset()
			enc := event.NewEncoder(&b)
			require.NoError(t, json.MarshalEncode(enc, tt.o))
			assert.Equal(t, tt.want+"\n", b.String())
			assert.True(t, jsontext.Value(bytes.TrimSpace(b.Bytes())).IsValid())
		})
	}
}

func TestDefaults(t *testing.T) {
	assert.Equal(t, turn.Options{FirstLineTimeout: time.Second, IdleTimeout: time.Minute,
		StopGrace: supervise.DefaultStopGrace, ExitGrace: supervise.DefaultExitGrace}, turn.Defaults(time.Second, time.Minute))
}

func TestRefused(t *testing.T) {
	err := failure.New(failure.Input, "bad turn")
	o := turn.Refused(err)
	assert.Equal(t, turn.Outcome{Status: turn.StatusError, Kind: failure.Input, Message: "bad turn", Warnings: []event.Warning{},
		Process: supervise.Outcome{Ending: supervise.SpawnFailed, ExitCode: -1, Stop: supervise.StopNone}}, o)
	o = turn.Refused(failure.New(failure.Cancelled, "stopped"))
	assert.Equal(t, turn.StatusCancelled, o.Status)
	assert.Equal(t, failure.Cancelled, o.Kind)
}

// TestStopAtRetry: a retry notice, said on stdout or (by a StderrDecoder)
// on stderr, reaches OnEvent as a retry warning; when StopAtRetry says
// so, the whole tree is stopped at once (the script would hang) and the
// turn fails with the retry's kind, StoppedAtRetry set.
func TestStopAtRetry(t *testing.T) {
	atSecond := func(r event.Retry) bool { return r.Attempt >= 2 }
	tests := []struct {
		name    string
		args    []string
		stderr  bool
		stop    func(event.Retry) bool
		status  string
		kind    failure.Kind
		retries int
		stopped bool
	}{
		{name: "retries on stdout, none stopped at", args: []string{"say:retry 1 429", "say:retry 2 429", "say:result"},
			status: turn.StatusDone, retries: 2},
		{name: "stopped at the second retry on stdout", args: []string{"say:retry 1 429", "say:retry 2 429", "hang"},
			stop: atSecond, status: turn.StatusError, kind: failure.RateLimited, retries: 2, stopped: true},
		{name: "the predicate decides: an auth retry", args: []string{"say:retry 1 401", "hang"},
			stop: func(r event.Retry) bool { return r.Kind == failure.Auth }, status: turn.StatusError, kind: failure.Auth, retries: 1, stopped: true},
		{name: "retries on stderr, none stopped at", args: []string{"err:retry 1 503", "err:noise", "say:result"}, stderr: true,
			status: turn.StatusDone, retries: 1},
		{name: "stopped at the second retry on stderr", args: []string{"err:retry 1 429", "err:retry 2 429", "hang"}, stderr: true,
			stop: atSecond, status: turn.StatusError, kind: failure.RateLimited, retries: 2, stopped: true},
		{name: "stderr is not read by a plain Decoder", args: []string{"err:retry 1 429", "say:result"},
			status: turn.StatusDone},
		// The child paces its stderr after its result: the two pipes are
		// read apart, and the result must have been read first.
		{name: "a retry after the result stops nothing", args: []string{"say:result", "sleep:1s", "err:retry 1 429", "err:retry 2 429"}, stderr: true,
			stop: atSecond, status: turn.StatusDone, retries: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := scriptPlan(t, tt.args...)
			var events []event.Event
			opts := collect(&events)
			opts.StopAtRetry = tt.stop
			opts.TotalTimeout = 20 * time.Second // a stop that does not happen fails here, not at the minute's deadlines
			var dec turn.Decoder = &lineDecoder{}
			if tt.stderr {
				dec = &stderrDecoder{}
			}
			o, err := turn.Run(context.Background(), plan, "the prompt\n", dec, opts)
			assert.Equal(t, tt.status, o.Status, "%v", err)
			assert.Equal(t, tt.kind, o.Kind)
			assert.Equal(t, tt.kind, failure.KindOf(err))
			assert.Equal(t, tt.stopped, o.StoppedAtRetry)
			var retries []event.Retry
			for _, e := range events {
				if e.Type == event.TypeWarning && e.Warning.Retry != nil {
					assert.Equal(t, event.WarnRetry, e.Warning.Code)
					retries = append(retries, *e.Warning.Retry)
				}
			}
			assert.Len(t, retries, tt.retries)
			if tt.stopped {
				assert.Equal(t, supervise.Aborted, o.Process.Ending, "stopped at once, not by a deadline")
				assert.Contains(t, o.Message, "the turn was stopped at the agent's retry")
			}
		})
	}
}

// TestStderrLinesAreCut: a StderrDecoder gets each stderr line, a long
// one cut to MaxStderrLine bytes.
func TestStderrLinesAreCut(t *testing.T) {
	long := strings.Repeat("x", turn.MaxStderrLine*3)
	plan := scriptPlan(t, "err:"+long, "err:retry 1 429", "say:result")
	var events []event.Event
	dec := &stderrDecoder{}
	_, err := turn.Run(context.Background(), plan, "the prompt\n", dec, collect(&events))
	require.NoError(t, err)
	assert.Equal(t, turn.MaxStderrLine, dec.longest)
	var retries []event.Retry
	for _, e := range events {
		if e.Type == event.TypeWarning && e.Warning.Retry != nil {
			retries = append(retries, *e.Warning.Retry)
		}
	}
	assert.Equal(t, []event.Retry{{Attempt: 1, Status: 429, Kind: failure.RateLimited}}, retries, "the retry after the long line")
}

// TestOutcomeModelIsTheOneThatAnswered: the result's model, when it names
// one, is the outcome's; the init event's otherwise.
func TestOutcomeModelIsTheOneThatAnswered(t *testing.T) {
	for _, tt := range []struct{ line, want string }{{"answered model-x", "model-x"}, {"result", "m"}} {
		var events []event.Event
		o, err := turn.Run(context.Background(), scriptPlan(t, "say:"+tt.line), "the prompt\n", &lineDecoder{}, collect(&events))
		require.NoError(t, err)
		assert.Equal(t, tt.want, o.Model, tt.line)
	}
}

func TestKindOfStatus(t *testing.T) {
	for status, want := range map[int]failure.Kind{0: failure.Network, 429: failure.RateLimited, 503: failure.RateLimited,
		529: failure.RateLimited, 401: failure.Auth, 403: failure.Auth, 402: failure.Quota, 500: failure.Unclassified, 400: failure.Unclassified} {
		assert.Equal(t, want, turn.KindOfStatus(status), "%d", status)
	}
}

func TestRetryWarning(t *testing.T) {
	tests := []struct {
		r     event.Retry
		cause string
		want  string
	}{
		{event.Retry{Attempt: 1, Max: 10, DelayMs: 1500, Status: 429, Kind: failure.RateLimited}, "rate_limit",
			"a model request failed (HTTP 429, rate_limited: rate_limit): retry 1 of 10 in 1.5 s"},
		{event.Retry{Attempt: 2, Kind: failure.Network}, "",
			"a model request got no answer (network): retry 2"},
		{event.Retry{Attempt: 3, Kind: failure.Network}, "\x1b[31mreset\x1b[0m " + strings.Repeat("y", 500),
			"a model request got no answer (network: reset " + strings.Repeat("y", 173) + "…): retry 3"},
	}
	for _, tt := range tests {
		e := turn.RetryWarning(tt.r, tt.cause)
		assert.Equal(t, event.TypeWarning, e.Type)
		assert.Equal(t, event.WarnRetry, e.Warning.Code)
		assert.Equal(t, tt.r, *e.Warning.Retry)
		assert.Equal(t, tt.want, e.Warning.Message)
	}
}
