package settingsapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
)

// errNotString is the contract's exact message for a binaryPath of another
// type (docs/contract.md, "The settings validation endpoint").
const errNotString = "binaryPath must be a string or null"

// decodeSettings parses a PUT /v1/cursor-cli/settings body: exactly one JSON
// object whose only key is "binaryPath" (matched case-sensitively, once),
// holding a string or null. It returns the trimmed path; "" means clear.
// Every error is of kind input and never echoes more than a bounded field
// name.
func decodeSettings(body []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return "", failure.New(failure.Input, "the request body must be a JSON object")
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return "", failure.New(failure.Input, "the request body must be a JSON object")
	}
	var (
		raw  json.RawMessage
		seen bool
	)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", malformed(err)
		}
		key, ok := tok.(string)
		if !ok {
			return "", failure.New(failure.Input, "the request body is not valid JSON")
		}
		if key != "binaryPath" {
			return "", failure.New(failure.Input, "unknown field %q; the only field is binaryPath", detail.Cut(key, 64))
		}
		if seen {
			return "", failure.New(failure.Input, "binaryPath appears more than once")
		}
		seen = true
		if err := dec.Decode(&raw); err != nil {
			return "", malformed(err)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return "", malformed(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "", failure.New(failure.Input, "the request body must hold exactly one JSON object")
	}
	if !seen {
		return "", failure.New(failure.Input, "binaryPath is required (null or \"\" clears it)")
	}
	if string(raw) == "null" {
		return "", nil
	}
	var path string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &path) != nil {
		return "", failure.New(failure.Input, errNotString)
	}
	path = strings.TrimSpace(path)
	if strings.ContainsFunc(path, unicode.IsControl) {
		return "", failure.New(failure.Input, "binaryPath must not contain control characters")
	}
	return path, nil
}

func malformed(err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return failure.New(failure.Input, "the request body is not valid JSON")
	}
	return failure.Wrap(failure.Input, err, "the request body is not valid JSON")
}
