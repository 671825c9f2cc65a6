package codex

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/mcpbridge"
	"github.com/cursorkit/cursorkit/turn"
)

// bridgeArgs returns the -c options that publish the bridge b to one
// `codex exec` run, in this order, each one TOML value (codex parses a -c
// value as TOML, and takes one that does not parse as a literal string:
// the quoting must be right, so tomlString and tomlKey write it):
//
//	-c mcp_servers.SERVER.command="COMMAND"
//	-c mcp_servers.SERVER.args=["ARG", ...]
//	-c mcp_servers.SERVER.env={NAME="VALUE", ...}
//	-c mcp_servers.SERVER.required=true
//	-c mcp_servers.SERVER.default_tools_approval_mode="approve"
//
// env is required: codex gives an MCP server only HOME, PATH and TMPDIR of
// its own environment, so the bridge program learns where its session
// file is from the entry alone; it holds that path, never the secret (the
// -c values are on argv, which every local user can read). required makes
// a bridge that fails to start fail the turn instead of running it without
// the tools. exec runs with the approval policy "never", under which an
// MCP call that needs approval fails: the server-wide "approve" runs the
// bridge's tools, which are the embedder's own, without asking. No file
// is written and ~/.codex/config.toml is not touched.
//
// A server name that is not a TOML bare key, a missing command, and a
// value that is not UTF-8 or holds a NUL are failure.Input errors.
func bridgeArgs(b *mcpbridge.Server) ([]string, error) {
	if !bareKey(b.Name) {
		return nil, failure.New(failure.Input, "the MCP bridge's server name %s is not letters, digits, '_' and '-'", turn.Quote(b.Name, 64))
	}
	if b.Command == "" {
		return nil, failure.New(failure.Input, "the MCP bridge names no command")
	}
	command, err := tomlString(b.Command)
	if err != nil {
		return nil, failure.Wrap(failure.Input, err, "the MCP bridge's command")
	}
	args := make([]string, len(b.Args))
	for i, a := range b.Args {
		if args[i], err = tomlString(a); err != nil {
			return nil, failure.Wrap(failure.Input, err, "the MCP bridge's argument %d", i+1)
		}
	}
	names := make([]string, 0, len(b.Env))
	for name := range b.Env {
		names = append(names, name)
	}
	slices.Sort(names)
	env := make([]string, len(names))
	for i, name := range names {
		key, err := tomlKey(name)
		if err != nil {
			return nil, failure.Wrap(failure.Input, err, "the MCP bridge's environment")
		}
		value, err := tomlString(b.Env[name])
		if err != nil {
			return nil, failure.Wrap(failure.Input, err, "the MCP bridge's environment variable %s", turn.Quote(name, 64))
		}
		env[i] = key + "=" + value
	}
	key := "mcp_servers." + b.Name + "."
	return []string{
		"-c", key + "command=" + command,
		"-c", key + "args=[" + strings.Join(args, ", ") + "]",
		"-c", key + "env={" + strings.Join(env, ", ") + "}",
		"-c", key + "required=true",
		"-c", key + `default_tools_approval_mode="approve"`,
	}, nil
}

// bareKey reports whether s is a TOML bare key: ASCII letters, digits,
// '_' and '-', at least one.
func bareKey(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-')
	})
}

// tomlKey is s as a TOML key: bare when it can be, else quoted.
func tomlKey(s string) (string, error) {
	if bareKey(s) {
		return s, nil
	}
	return tomlString(s)
}

// tomlString is s as a TOML basic string: between double quotes, with '"'
// and '\' escaped, and every control character (U+0000 to U+001F, U+007F)
// written as an escape, so that a Windows path (C:\Users\x) or any other
// text reads back exactly. TOML is UTF-8 and a process argument cannot
// hold a NUL: s must be valid UTF-8 without one.
func tomlString(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", failure.New(failure.Input, "%s is not UTF-8", turn.Quote(s, 64))
	}
	if strings.IndexByte(s, 0) >= 0 {
		return "", failure.New(failure.Input, "%s holds a NUL", turn.Quote(s, 64))
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String(), nil
}

// bridgeRefused is the policy failure of a call of the bridge's server
// naming a tool the bridge does not publish.
func bridgeRefused(b *mcpbridge.Server, tool jsontext.Value) *failure.Error {
	name, _ := unquote(tool)
	return failure.New(failure.Policy, "the agent called the tool %s of the MCP bridge, which does not publish it (it publishes: %s)",
		turn.Quote(name, 64), strings.Join(b.Tools, ", "))
}

// bridgedTool returns the registered name of the bridge's tool an
// mcp_tool_call item calls on server, whether server is the bridge's at
// all, and whether the bridge publishes the tool. tool is the item's raw
// JSON string.
func bridgedTool(b *mcpbridge.Server, server string, tool jsontext.Value) (own string, onServer, published bool) {
	if b == nil || server != b.Name {
		return "", false, false
	}
	var name string
	if len(tool) > 0 {
		name, _ = unquote(tool)
	}
	own, published = b.Own(name)
	return own, true, published
}

// unquote reads a JSON string.
func unquote(v jsontext.Value) (string, bool) {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false
	}
	return s, true
}

// fillBridged sets t of a bridged call from its item: the call's
// arguments as the args and, when done, its result's text (or its
// error's message) as the result, a JSON string.
func fillBridged(it *wireItem, t *event.Tool, done bool) {
	t.Args = jsontext.Value(it.Arguments.Value()).Clone()
	if !done {
		return
	}
	t.Status = it.Status.Value()
	if res := jsontext.Value(it.Result.Value()); res != nil {
		if q, ok := mcpbridge.ResultString(res); ok {
			t.Result = q
			return
		}
		t.Result = res.Clone()
		return
	}
	if fail := jsontext.Value(it.Error.Value()); fail != nil {
		var e struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(fail, &e) == nil && e.Message != "" {
			t.Result, _ = jsontext.AppendQuote(nil, e.Message)
			return
		}
		t.Result = fail.Clone()
	}
}
