package mcpstage

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/safefile"
)

// MaxEntryFileSize bounds the file ReadEntryFile reads, in bytes.
const MaxEntryFileSize = 1 << 20

// ReadEntryFile reads the MCP server file at path: one JSON object with the
// members command (a string), args (an array of strings) and env (an object
// whose values are strings), and no other; args and env may be null or
// absent, command may not, and no member may be given twice. The file must
// be a regular file of at most MaxEntryFileSize bytes; its open never
// blocks (a FIFO does not wait for a writer).
//
// Every failure is failure.Input naming the file and the member or byte
// offset that is wrong, never a value: env often holds secrets. Whether
// the entry may be staged (a command not blank, no NUL) is Stage's to say.
func ReadEntryFile(path string) (Entry, error) {
	data, err := safefile.Read(path, MaxEntryFileSize)
	if problem := safefile.Problem(err); problem != "" {
		return Entry{}, badEntryFile(path, "it %s", problem)
	} else if err != nil {
		return Entry{}, failure.Wrap(failure.Input, err, "reading the MCP server file %s", strconv.Quote(path))
	}
	e, err := parseEntry(data)
	if err != nil {
		return Entry{}, badEntryFile(path, "%s", err)
	}
	return e, nil
}

// badEntryFile is ReadEntryFile's failure: what is wrong with the file.
func badEntryFile(path, format string, args ...any) error {
	return failure.New(failure.Input, "MCP server file %s: %s", strconv.Quote(path), fmt.Sprintf(format, args...))
}

// checkOneValue reports, without quoting any of it, why data is not one
// valid JSON value.
func checkOneValue(data []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	if _, err := dec.ReadValue(); err != nil {
		var se *jsontext.SyntacticError
		if errors.As(err, &se) {
			if errors.Is(err, jsontext.ErrDuplicateName) {
				return fmt.Errorf("a member is given twice (at byte offset %d)", se.ByteOffset)
			}
			return fmt.Errorf("it is not valid JSON (at byte offset %d)", se.ByteOffset)
		}
		return errors.New("it is not valid JSON")
	}
	if _, err := dec.ReadToken(); err == nil {
		return errors.New("it holds more than one JSON value")
	}
	return nil
}

// parseEntry reads data into an Entry. Its errors name a member or an
// offset, never a value.
func parseEntry(data []byte) (Entry, error) {
	var e Entry
	if err := checkOneValue(data); err != nil {
		return e, err
	}
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	if tok, _ := dec.ReadToken(); tok.Kind() != '{' {
		return e, errors.New(`it must hold one JSON object {"command": ..., "args": [...], "env": {...}}`)
	}
	seen := false
	for dec.PeekKind() == '"' {
		tok, _ := dec.ReadToken()
		member := tok.String() // valid only until the next read
		val, _ := dec.ReadValue()
		switch member {
		case "command":
			if val.Kind() != '"' || json.Unmarshal(val, &e.Command) != nil {
				return e, errors.New(`"command" must be a string`)
			}
			seen = true
		case "args":
			var els []jsontext.Value
			if json.Unmarshal(val, &els) != nil || !allStrings(slices.Values(els)) || json.Unmarshal(val, &e.Args) != nil {
				return e, errors.New(`"args" must be an array of strings`)
			}
		case "env":
			var els map[string]jsontext.Value
			if json.Unmarshal(val, &els) != nil || !allStrings(maps.Values(els)) || json.Unmarshal(val, &e.Env) != nil {
				return e, errors.New(`"env" must be an object whose values are strings`)
			}
		default:
			name := strconv.Quote(member)
			if len(member) > 64 {
				name = strconv.Quote(member[:64]) + "…"
			}
			return e, fmt.Errorf("unknown member %s (want command, args and env)", name)
		}
	}
	if !seen {
		return e, errors.New(`"command" is missing`)
	}
	return e, nil
}

// allStrings reports whether every value is a JSON string: json.Unmarshal
// would take a null for "".
func allStrings(values iter.Seq[jsontext.Value]) bool {
	for v := range values {
		if v.Kind() != '"' {
			return false
		}
	}
	return true
}
