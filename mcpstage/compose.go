package mcpstage

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/cursorkit/cursorkit/failure"
)

// The config bytes are the operator's content of the current file with
// cursorkit's entries put in:
//
//   - Operator content is never decoded into maps: names and values are the
//     file's raw bytes, in their order, only re-indented (Indent keeps
//     strings and numbers as written: "\u0041" and 1.0E+2 stay).
//   - Names are matched decoded, as JSON.parse (Cursor) sees them:
//     "mcp\u0053ervers" is the servers object, "cursorkit\u002dtools-x" ours.
//   - Duplicate names survive verbatim, and every member with the prefix
//     is removed, all copies. Only a second top-level "mcpServers" is
//     unparsable: which one Cursor would use is not ours to guess.
//   - The file must be UTF-8 holding exactly one JSON object. Unparsable
//     (failure.Setup, which the caller quarantines): zero bytes or only
//     whitespace; a byte order mark (JSON.parse rejects it); invalid
//     UTF-8; a syntax error; arrays and objects nested deeper than
//     maxNesting (valid JSON, but jsontext's limit); a top-level value
//     that is not an object; anything after it; an mcpServers that is not
//     an object, or twice.
//     An escaped lone surrogate ("\ud800") is valid for JSON.parse: kept.
//   - Errors give a byte offset, never the file's text: mcp.json holds
//     servers' env, often a token.

// Entry is one MCP server as Cursor's mcp.json holds it.
type Entry struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`          // always written, [] when empty
	Env     map[string]string `json:"env,omitempty"` // written with keys sorted (deterministic bytes)
}

// keyedEntry is an entry with its server key (the name under mcpServers).
type keyedEntry struct {
	Key   string
	Entry Entry
}

// serversName is the top-level member holding the MCP servers.
const serversName = "mcpServers"

// compose returns the config bytes: current's content (nil: no file) with
// every member of "mcpServers" whose key starts with prefix removed, then
// entries appended to it in the order given (mcpServers created last when
// absent and there are entries; one left empty stays); the whole document
// indented by two spaces with a final newline.
//
// The prefix must pass checkKeyPrefix, and every entry checkEntry with a
// distinct key that is prefix followed by a name: failure.Input otherwise.
// An unparsable current is failure.Setup.
func compose(current []byte, prefix string, entries []keyedEntry) ([]byte, error) {
	if err := checkKeyPrefix(prefix); err != nil {
		return nil, err
	}
	if err := checkKeyedEntries(prefix, entries); err != nil {
		return nil, err
	}
	doc, err := parseConfig(current)
	if err != nil {
		return nil, err
	}

	if doc.serversAt < 0 && len(entries) > 0 {
		doc.serversAt = len(doc.members)
		doc.members = append(doc.members, member{name: serversName, rawName: []byte(`"` + serversName + `"`)})
	}
	// The new document, compact; Indent formats it at the end.
	b := []byte{'{'}
	for i, m := range doc.members {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(b, m.rawName...), ':')
		if i == doc.serversAt {
			if b, err = appendServers(b, doc, prefix, entries); err != nil {
				return nil, err
			}
			continue
		}
		b = append(b, m.rawValue...)
	}
	b = append(b, '}')

	v := jsontext.Value(b)
	if err := v.Indent(jsontext.WithIndent("  ")); err != nil {
		// The cause is left out: its text may quote the file.
		return nil, failure.New(failure.Unclassified, "composing the MCP config failed")
	}
	return append(v, '\n'), nil
}

func checkKeyedEntries(prefix string, entries []keyedEntry) error {
	seen := make(map[string]bool, len(entries))
	for i, e := range entries {
		if !utf8.ValidString(e.Key) || !strings.HasPrefix(e.Key, prefix) || len(e.Key) == len(prefix) {
			return failure.New(failure.Input, "MCP server key %d is not the prefix %q followed by a name", i+1, prefix)
		}
		if seen[e.Key] {
			return failure.New(failure.Input, "MCP server key %q is given twice", e.Key)
		}
		seen[e.Key] = true
		if err := checkEntry(e.Entry); err != nil {
			return err
		}
	}
	return nil
}

// appendServers appends the compact mcpServers object to b: doc's servers
// but those whose key starts with prefix, then entries.
func appendServers(b []byte, doc config, prefix string, entries []keyedEntry) ([]byte, error) {
	b = append(b, '{')
	n := 0
	for _, m := range doc.servers {
		if strings.HasPrefix(m.name, prefix) {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, m.rawName...), ':'), m.rawValue...)
		n++
	}
	for _, e := range entries {
		if n > 0 {
			b = append(b, ',')
		}
		name, err := jsontext.AppendQuote(b, e.Key)
		if err != nil {
			return nil, failure.Wrap(failure.Input, err, "MCP server key %q", e.Key)
		}
		b = append(name, ':')
		value, err := json.Marshal(e.Entry, json.Deterministic(true))
		if err != nil {
			return nil, failure.Wrap(failure.Input, err, "MCP server %q cannot be written", e.Key)
		}
		b = append(b, value...)
		n++
	}
	return append(b, '}'), nil
}

// ourKeys lists the keys of "mcpServers" that start with prefix, in file
// order, each once. A nil current (no file) has none. Errors as compose's.
func ourKeys(current []byte, prefix string) ([]string, error) {
	if err := checkKeyPrefix(prefix); err != nil {
		return nil, err
	}
	doc, err := parseConfig(current)
	if err != nil {
		return nil, err
	}
	var keys []string
	seen := map[string]bool{}
	for _, m := range doc.servers {
		if strings.HasPrefix(m.name, prefix) && !seen[m.name] {
			seen[m.name] = true
			keys = append(keys, m.name)
		}
	}
	return keys, nil
}

// checkEntry validates an entry before it is staged: a command that is not
// empty or only spaces; no NUL byte and only valid UTF-8 in the command,
// the args, env names and values; env names neither empty nor holding '='.
// Failures are failure.Input; messages never quote args or env values.
func checkEntry(e Entry) error {
	if strings.TrimSpace(e.Command) == "" {
		return failure.New(failure.Input, "the MCP server's command is empty")
	}
	if !cleanString(e.Command) {
		return failure.New(failure.Input, "the MCP server's command holds a NUL byte or is not valid UTF-8")
	}
	for i, a := range e.Args {
		if !cleanString(a) {
			return failure.New(failure.Input, "argument %d of the MCP server holds a NUL byte or is not valid UTF-8", i+1)
		}
	}
	for name, value := range e.Env {
		switch {
		case name == "":
			return failure.New(failure.Input, "an environment variable name of the MCP server is empty")
		case strings.Contains(name, "=") || !cleanString(name):
			// Not quoted: a "NAME=value" mistake would show the value.
			return failure.New(failure.Input, "an environment variable name of the MCP server holds '=', a NUL byte or invalid UTF-8")
		case !cleanString(value):
			return failure.New(failure.Input, "the MCP server's environment variable %s holds a NUL byte or is not valid UTF-8", name)
		}
	}
	return nil
}

// cleanString reports whether s is valid UTF-8 without NUL bytes.
func cleanString(s string) bool {
	return utf8.ValidString(s) && !strings.Contains(s, "\x00")
}

// member is one object member as the file has it.
type member struct {
	name     string // decoded, for matching
	rawName  []byte // the name's bytes in the file, escapes and all
	rawValue []byte // the value's bytes in the file (nil for mcpServers)
}

// config is a parsed mcp.json's members, in file order.
type config struct {
	members   []member
	serversAt int      // index of mcpServers in members, -1 when absent
	servers   []member // mcpServers's members
}

// parseConfig splits current into members; nil is a config with none.
func parseConfig(current []byte) (config, error) {
	doc := config{serversAt: -1}
	if current == nil {
		return doc, nil
	}
	if bytes.HasPrefix(current, []byte("\xEF\xBB\xBF")) {
		return doc, unparsable("it starts with a byte order mark")
	}
	if !utf8.Valid(current) {
		return doc, unparsable("it is not valid UTF-8")
	}
	// AllowInvalidUTF8 only lets escaped lone surrogates through: raw bytes
	// were checked above.
	dec := jsontext.NewDecoder(bytes.NewReader(current),
		jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	tok, err := dec.ReadToken()
	switch {
	case errors.Is(err, io.EOF):
		return doc, unparsable("it is empty")
	case err != nil:
		return doc, syntaxError(current, err)
	case tok.Kind() != '{':
		return doc, unparsable("its top-level value is not an object")
	}
	if doc.members, err = readMembers(current, dec, func(i int, m member) (bool, error) {
		if m.name != serversName {
			return false, nil
		}
		if doc.serversAt >= 0 {
			return true, unparsable("it has more than one \"mcpServers\"")
		}
		if k := dec.PeekKind(); k != '{' {
			if k == 0 { // a syntax error: let ReadValue report it
				_, err := dec.ReadValue()
				return true, syntaxError(current, err)
			}
			return true, unparsable("its \"mcpServers\" is not an object")
		}
		if _, err := dec.ReadToken(); err != nil {
			return true, syntaxError(current, err)
		}
		doc.serversAt = i
		doc.servers, err = readMembers(current, dec, nil)
		return true, err
	}); err != nil {
		return doc, err
	}
	switch _, err := dec.ReadToken(); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return doc, syntaxError(current, err)
	default:
		return doc, unparsable("it holds more than one JSON value")
	}
	return doc, nil
}

// readMembers reads the members of the object whose '{' dec (decoding
// current) has read, through its '}': each name, raw and decoded (lone
// surrogates as U+FFFD, as JSON.parse shows them), and its value, raw,
// unless own (when not nil) read member i's value itself.
func readMembers(current []byte, dec *jsontext.Decoder, own func(i int, m member) (bool, error)) (ms []member, err error) {
	for dec.PeekKind() == '"' {
		raw, err := dec.ReadValue()
		if err != nil {
			return nil, syntaxError(current, err)
		}
		m := member{rawName: bytes.Clone(raw)}
		if err := json.Unmarshal(m.rawName, &m.name, jsontext.AllowInvalidUTF8(true)); err != nil {
			return nil, syntaxError(current, err)
		}
		if own != nil {
			if read, err := own(len(ms), m); err != nil {
				return nil, err
			} else if read {
				ms = append(ms, m)
				continue
			}
		}
		if raw, err = dec.ReadValue(); err != nil {
			return nil, syntaxError(current, err)
		}
		m.rawValue = bytes.Clone(raw)
		ms = append(ms, m)
	}
	// The '}': PeekKind saw no name, and any other token there is a syntax
	// error ReadToken reports.
	if _, err := dec.ReadToken(); err != nil {
		return nil, syntaxError(current, err)
	}
	return ms, nil
}

// unparsable is the failure for a config compose cannot work on.
func unparsable(why string) error {
	return failure.New(failure.Setup, "the MCP config is not one JSON object: %s", why)
}

// maxNesting is jsontext's nesting limit: an array or object that opens
// deeper is refused, valid JSON or not.
const maxNesting = 10000

// syntaxError reports a jsontext error in current by its offset only: its
// text may quote the file (secrets in env).
func syntaxError(current []byte, err error) error {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		if tooDeep(current, se) {
			return failure.New(failure.Setup, "the MCP config is nested deeper than %d levels (at byte offset %d), more than cursorkit parses", maxNesting, se.ByteOffset)
		}
		return failure.New(failure.Setup, "the MCP config is not valid JSON: syntax error at byte offset %d", se.ByteOffset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return unparsable("it ends early")
	}
	return failure.New(failure.Setup, "the MCP config is not valid JSON")
}

// tooDeep reports whether se is jsontext refusing an array or object that
// opens past maxNesting (that error is not exported to match).
func tooDeep(current []byte, se *jsontext.SyntacticError) bool {
	at := se.ByteOffset
	if at < 0 || at >= int64(len(current)) || current[at] != '[' && current[at] != '{' {
		return false
	}
	depth := 0
	for range se.JSONPointer.Tokens() {
		depth++
	}
	return depth >= maxNesting
}
