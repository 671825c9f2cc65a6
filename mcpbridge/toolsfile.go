package mcpbridge

import (
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/safefile"
)

// MaxToolsFileSize bounds the tools file ReadToolsFile reads, in bytes.
const MaxToolsFileSize = 1 << 20

// CommandSpec is one tool of a tools file: a program that answers a call.
type CommandSpec struct {
	// Name, Description and InputSchema are the Tool's.
	Name        string
	Description string
	InputSchema jsontext.Value
	// Command is the program and its arguments, never through a shell. A
	// program named with a path separator is taken as it is (a relative
	// one from the directory NewCommandSet is given); a bare name is
	// looked for on PATH.
	Command []string
	// Timeout bounds one call (DefaultCallTimeout when zero).
	Timeout time.Duration
}

// fileTool is one element of a tools file's "tools", as written.
type fileTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema jsontext.Value `json:"inputSchema"`
	Command     []string       `json:"command"`
	Timeout     string         `json:"timeout"`
}

// fileMembers are a tool's members, as an error message lists them.
const fileMembers = "name, description, inputSchema, command and timeout"

// ParseToolsFile parses a tools file's bytes:
//
//	{"tools": [{"name": "lookup_word", "description": "...",
//	            "inputSchema": {"type": "object", ...},
//	            "command": ["prog", "arg"], "timeout": "10s"}]}
//
// One JSON object holding "tools", a non-empty array of tools, and no other
// member. A tool has a name (what Tool.Name may be: 1 to 38 lower-case
// ASCII letters, digits and '_', starting with a letter; distinct within
// the file), an optional
// description, an inputSchema that is an object schema (CheckSchema), a
// command of at least one string whose first is not blank and none holding
// NUL, and an optional timeout, a Go duration above zero (absent:
// DefaultCallTimeout). No member may be unknown or given twice.
//
// Every error is failure.Input and says what is wrong, where (a tool's
// number and name, a member, a byte offset), never a value of the file
// beyond a tool's or member's name: a command line may hold a secret.
func ParseToolsFile(data []byte) ([]CommandSpec, error) {
	var file struct {
		Tools []jsontext.Value `json:"tools"`
	}
	if err := json.Unmarshal(data, &file, json.RejectUnknownMembers(true)); err != nil {
		return nil, failure.New(failure.Input, "%s", describeJSONError(err))
	}
	if len(file.Tools) == 0 {
		return nil, failure.New(failure.Input, `it has no tools: "tools" must be a non-empty array`)
	}
	specs := make([]CommandSpec, 0, len(file.Tools))
	seen := make(map[string]bool, len(file.Tools))
	for i, raw := range file.Tools {
		spec, err := parseFileTool(i+1, raw)
		if err != nil {
			return nil, err
		}
		if seen[spec.Name] {
			return nil, failure.New(failure.Input, "tool %d: the name %q is given to another tool too", i+1, spec.Name)
		}
		seen[spec.Name] = true
		specs = append(specs, spec)
	}
	return specs, nil
}

// parseFileTool parses the nth tool (from 1) of a tools file.
func parseFileTool(n int, raw jsontext.Value) (CommandSpec, error) {
	var t fileTool
	if err := json.Unmarshal(raw, &t, json.RejectUnknownMembers(true)); err != nil {
		return CommandSpec{}, failure.New(failure.Input, "tool %d: %s", n, describeToolError(err))
	}
	if !validName(t.Name) {
		return CommandSpec{}, failure.New(failure.Input, "tool %d: the name %q is not 1 to %d lower-case letters, digits and '_' starting with a letter", n, cut(t.Name), maxName)
	}
	where := fmt.Sprintf("tool %d (%s)", n, t.Name)
	if err := CheckSchema(t.InputSchema); err != nil {
		return CommandSpec{}, failure.New(failure.Input, "%s: %s", where, schemaProblem(err))
	}
	switch {
	case len(t.Command) == 0:
		return CommandSpec{}, failure.New(failure.Input, `%s: "command" is missing or empty: it needs at least the program`, where)
	case strings.TrimSpace(t.Command[0]) == "":
		return CommandSpec{}, failure.New(failure.Input, `%s: "command" names no program: its first string is blank`, where)
	}
	for i, arg := range t.Command {
		if strings.ContainsRune(arg, 0) {
			return CommandSpec{}, failure.New(failure.Input, `%s: "command" string %d holds a NUL character`, where, i+1)
		}
	}
	spec := CommandSpec{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Command: t.Command}
	if t.Timeout != "" {
		d, err := time.ParseDuration(t.Timeout)
		switch {
		case err != nil:
			return CommandSpec{}, failure.New(failure.Input, `%s: "timeout" is not a duration such as "10s" or "2m"`, where)
		case d <= 0:
			return CommandSpec{}, failure.New(failure.Input, `%s: "timeout" must be above zero`, where)
		}
		spec.Timeout = d
	}
	return spec, nil
}

// schemaProblem is CheckSchema's complaint naming the member, without
// the decoder's words after it, which may quote the schema.
func schemaProblem(err error) string {
	msg, _, _ := strings.Cut(err.Error(), ": ")
	return strings.Replace(msg, "the input schema", `"inputSchema"`, 1)
}

// describeJSONError says why a tools file's top level did not decode,
// quoting no value.
func describeJSONError(err error) string {
	if msg, ok := syntaxProblem(err); ok {
		return msg
	}
	var se *json.SemanticError
	if !errors.As(err, &se) {
		return "it is not a tools file"
	}
	tokens := pointerTokens(se.JSONPointer)
	switch {
	case errors.Is(err, json.ErrUnknownName) && len(tokens) == 1:
		return fmt.Sprintf(`unknown member %s (want "tools")`, quoteName(tokens[0]))
	case len(tokens) == 0:
		return `it must hold one JSON object {"tools": [...]}`
	}
	return `"tools" must be an array of tool objects`
}

// describeToolError says why one tool did not decode, quoting no value.
func describeToolError(err error) string {
	if msg, ok := syntaxProblem(err); ok {
		return msg
	}
	var se *json.SemanticError
	if !errors.As(err, &se) {
		return "it is not a tool object"
	}
	tokens := pointerTokens(se.JSONPointer)
	switch {
	case len(tokens) == 0:
		return "it must be a JSON object with " + fileMembers
	case errors.Is(err, json.ErrUnknownName) && len(tokens) == 1:
		return fmt.Sprintf("unknown member %s (want %s)", quoteName(tokens[0]), fileMembers)
	case tokens[0] == "command":
		return `"command" must be an array of strings`
	}
	return fmt.Sprintf("%s must be a string", quoteName(tokens[0]))
}

// syntaxProblem describes a syntax error by its byte offset (within what
// was decoded), never by the text there.
func syntaxProblem(err error) (string, bool) {
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) {
		return "", false
	}
	switch {
	case errors.Is(err, jsontext.ErrDuplicateName):
		return fmt.Sprintf("the member %s is given twice (at byte offset %d)", quoteName(se.JSONPointer.LastToken()), se.ByteOffset), true
	}
	return fmt.Sprintf("it is not valid JSON (at byte offset %d)", se.ByteOffset), true
}

// pointerTokens splits a JSON pointer into its tokens.
func pointerTokens(p jsontext.Pointer) []string {
	var out []string
	for tok := range p.Tokens() {
		out = append(out, tok)
	}
	return out
}

// quoteName quotes a member's name, cut to a length a message can carry.
func quoteName(name string) string {
	return strconv.Quote(cut(strings.ToValidUTF8(name, "\uFFFD")))
}

// ReadToolsFile reads the tools file at path (ParseToolsFile) and makes
// its tools (NewCommandSet), whose relative programs are found from the
// file's own directory. The file must be a regular file of at most
// MaxToolsFileSize bytes; its open never blocks (a FIFO does not wait for
// a writer). Every error about the file, a program that cannot be found or
// launched included, is failure.Input naming the file; a cancelled ctx is
// failure.Cancelled.
func ReadToolsFile(ctx context.Context, path string, opts CommandOptions) (*CommandSet, error) {
	data, err := safefile.Read(path, MaxToolsFileSize)
	if problem := safefile.Problem(err); problem != "" {
		return nil, failure.New(failure.Input, "tools file %s %s", strconv.Quote(path), problem)
	} else if err != nil {
		return nil, failure.Wrap(failure.Input, err, "reading the tools file %s", strconv.Quote(path))
	}
	specs, err := ParseToolsFile(data)
	if err != nil {
		return nil, failure.Wrap(failure.Input, err, "tools file %s", strconv.Quote(path))
	}
	if opts.ProgramDir == "" {
		abs, err := filepath.Abs(filepath.Dir(path))
		if err != nil {
			return nil, failure.Wrap(failure.Input, err, "tools file %s: its directory is unusable", strconv.Quote(path))
		}
		opts.ProgramDir = abs
	}
	set, err := NewCommandSet(ctx, specs, opts)
	if err != nil && failure.KindOf(err) == failure.Input {
		return nil, failure.Wrap(failure.Input, err, "tools file %s", strconv.Quote(path))
	}
	return set, err
}
