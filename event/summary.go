package event

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"strings"

	"github.com/cursorkit/cursorkit/internal/detail"
)

// summaryArgs are the arguments that say most about a call, in the order
// tried.
func summaryArgs() []string {
	return []string{"path", "command", "pattern", "globPattern", "query", "url", "targetDirectory", "name"}
}

// Summary describes the call in one short line for people, e.g.
// `read README.md` or `shell go test ./...`: the tool's name and its most
// telling string argument (path, command, pattern, globPattern, query,
// url, targetDirectory or name, the first one present), control
// characters replaced by spaces, at most about 120 bytes.
func (t *Tool) Summary() string {
	name := t.Name
	if name == "" {
		name = "(unidentified tool)"
	}
	var args map[string]any
	if len(t.Args) > 0 && json.Unmarshal(t.Args, &args, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)) == nil {
		for _, k := range summaryArgs() {
			if v, ok := args[k].(string); ok && v != "" {
				return oneLine(name+" "+v, 120)
			}
		}
	}
	return oneLine(name, 120)
}

// oneLine replaces control characters with spaces and cuts s to at most
// max bytes on a rune boundary, marking the cut.
func oneLine(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	return detail.Cut(s, max)
}
