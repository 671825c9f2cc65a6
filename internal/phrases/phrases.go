// Package phrases reads an agent's message with a precedence table: each
// entry a value (a failure kind, a cause) and the lower-case phrases that
// name it, the first entry with a phrase in the text winning.
package phrases

import (
	"strings"

	"github.com/cursorkit/cursorkit/internal/detail"
)

// Entry pairs a value with the lower-case phrases that name it.
type Entry[T any] struct {
	Value   T
	Phrases []string
}

// First returns the value of the first entry of table one of whose
// phrases text holds, ignoring case and terminal escape sequences
// (detail.StripANSI), and none when no entry's phrase is in it.
func First[T any](text string, table []Entry[T], none T) T {
	if text == "" {
		return none
	}
	lower := strings.ToLower(detail.StripANSI(text))
	for _, e := range table {
		for _, p := range e.Phrases {
			if strings.Contains(lower, p) {
				return e.Value
			}
		}
	}
	return none
}
