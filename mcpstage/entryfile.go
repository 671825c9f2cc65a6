package mcpstage

import (
	"bytes"
	"encoding/json/jsontext"
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/safefile"
)

// MaxEntryFileSize bounds the file ReadEntryFile reads, in bytes.
const MaxEntryFileSize = 1 << 20

// ReadEntryFile reads the MCP server file at path: one JSON object with the
// members command (a string), args (an array of strings) and env (an object
// whose values are strings), and no other; args and env may be null or
// absent, command may not, and no member may be given twice.
//
// The file must be a regular file of at most MaxEntryFileSize bytes; its
// open never blocks (a FIFO does not wait for a writer). Every failure is
// failure.Input, and its message names the file and the member or the byte
// offset that is wrong, never a value: env often holds secrets.
//
// ReadEntryFile checks the file's shape only. Whether the entry may be
// staged (a command that is not blank, no NUL anywhere) is Stage's to say.
func ReadEntryFile(path string) (Entry, error) {
	data, err := safefile.Read(path, MaxEntryFileSize)
	if err != nil {
		var tooLarge *safefile.TooLargeError
		var notRegular *safefile.NotRegularError
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return Entry{}, badEntryFile(path, "it does not exist")
		case errors.As(err, &tooLarge):
			return Entry{}, badEntryFile(path, "it is larger than %d bytes", MaxEntryFileSize)
		case errors.As(err, &notRegular):
			return Entry{}, badEntryFile(path, "it is not a regular file")
		}
		return Entry{}, failure.Wrap(failure.Input, err, "reading the MCP server file %s", strconv.Quote(path))
	}
	if err := checkOneValue(data); err != nil {
		return Entry{}, badEntryFile(path, "%s", err)
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

// parseEntry reads the members of data, one valid JSON value, into an
// Entry. Its errors name a member, never a value.
func parseEntry(data []byte) (Entry, error) {
	var e Entry
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
			if val.Kind() != '"' {
				return e, errors.New(`"command" must be a string`)
			}
			e.Command = stringOf(val)
			seen = true
		case "args":
			args, ok := stringsOf(val)
			if !ok {
				return e, errors.New(`"args" must be an array of strings`)
			}
			e.Args = args
		case "env":
			env, ok := stringMapOf(val)
			if !ok {
				return e, errors.New(`"env" must be an object whose values are strings`)
			}
			e.Env = env
		default:
			return e, fmt.Errorf("unknown member %s (want command, args and env)", boundedQuote(member, 64))
		}
	}
	if !seen {
		return e, errors.New(`"command" is missing`)
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
