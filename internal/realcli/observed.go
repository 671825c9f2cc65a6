package realcli

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Observed is what one turn showed on `cursorkit run --json`'s stream (the
// library's events and outcome are marshalled to that stream first, so
// both entry points are read the same way).
type Observed struct {
	Lines     []string // every line, in order
	Init      []Init
	Text      string // the text events, concatenated
	Thinking  int    // thinking events
	Started   []Tool
	Completed []Tool
	Warnings  []Warning
	Results   []Result
	Engaged   []map[string]any // cross-runtime-fallback-engaged events
	Outcome   Outcome
}

// Init is an init event.
type Init struct {
	SessionID string `json:"sessionId"`
	Model     string `json:"model"`
}

// Tool is a tool_started or tool_completed event.
type Tool struct {
	CallID string         `json:"callId"`
	Name   string         `json:"tool"`
	Args   jsontext.Value `json:"args"`
	Status *string        `json:"status"`
	Result jsontext.Value `json:"result"`
}

// Warning is a warning event.
type Warning struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Retry   *struct {
		Attempt int    `json:"attempt"`
		Max     int    `json:"max"`
		DelayMs int64  `json:"delayMs"`
		Status  int    `json:"status"`
		Kind    string `json:"kind"`
	} `json:"retry"`
}

// Result is a result event.
type Result struct {
	Subtype string `json:"subtype"`
	IsError bool   `json:"isError"`
	Text    string `json:"result"`
	Usage   Usage  `json:"usage"`
}

// Usage is a result's or an outcome's usage.
type Usage struct {
	Reported         bool   `json:"reported"`
	InputTokens      *int64 `json:"inputTokens"`
	OutputTokens     *int64 `json:"outputTokens"`
	CacheReadTokens  *int64 `json:"cacheReadTokens"`
	CacheWriteTokens *int64 `json:"cacheWriteTokens"`
}

// Outcome is the outcome line.
type Outcome struct {
	Status    string    `json:"status"`
	Kind      string    `json:"kind"` // "" when done
	Message   string    `json:"message"`
	SessionID *string   `json:"sessionId"`
	Model     string    `json:"model"`
	Usage     Usage     `json:"usage"`
	Warnings  []Warning `json:"warnings"`
}

// Observe reads a turn's NDJSON stream: every line must be one JSON
// object, and the last the outcome.
func Observe(t testing.TB, stream []byte) Observed {
	t.Helper()
	var o Observed
	sawOutcome := false
	for _, line := range bytes.Split(bytes.TrimRight(stream, "\n"), []byte("\n")) {
		o.Lines = append(o.Lines, string(line))
		require.False(t, sawOutcome, "a line after the outcome: %s", line)
		var head struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		require.NoError(t, json.Unmarshal(line, &head), "not one JSON object: %s", line)
		switch head.Type {
		case "init":
			o.Init = append(o.Init, decode[Init](t, line))
		case "text":
			o.Text += head.Text
		case "thinking":
			o.Thinking++
		case "tool_started":
			o.Started = append(o.Started, decode[Tool](t, line))
		case "tool_completed":
			o.Completed = append(o.Completed, decode[Tool](t, line))
		case "warning":
			o.Warnings = append(o.Warnings, decode[Warning](t, line))
		case "result":
			o.Results = append(o.Results, decode[Result](t, line))
		case "cross-runtime-fallback-engaged":
			o.Engaged = append(o.Engaged, decode[map[string]any](t, line))
		case "outcome":
			o.Outcome = decode[Outcome](t, line)
			sawOutcome = true
		}
	}
	require.True(t, sawOutcome, "no outcome line in:\n%s", stream)
	return o
}

func decode[T any](t testing.TB, line []byte) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(line, &v), "%s", line)
	return v
}

// Retries returns the warnings that report a retry of the agent.
func (o Observed) Retries() []Warning {
	var out []Warning
	for _, w := range o.Warnings {
		if w.Retry != nil {
			out = append(out, w)
		}
	}
	return out
}

// Names returns the tools' names, in order.
func Names(tools []Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

// String is the stream, for failure messages.
func (o Observed) String() string { return strings.Join(o.Lines, "\n") }
