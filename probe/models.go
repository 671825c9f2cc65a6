package probe

import (
	"strings"
	"unicode"

	"github.com/cursorkit/cursorkit/internal/detail"
)

// Model is one entry of the account's model catalog.
type Model struct {
	// ID is the identifier to pass to --model, as the agent printed it.
	ID string `json:"id"`
	// Label is the display name, without the (current)/(default) markers.
	Label   string `json:"label"`
	Current bool   `json:"current"`
	Default bool   `json:"default"`
}

// parsedModels is the parsed output of `models`.
type parsedModels struct {
	// Models in the order printed, deduplicated by case-insensitive id
	// (the first wins). Never nil.
	Models []Model `json:"models"`
	// Empty reports the agent's explicit empty state, "No models available
	// for this account.": an empty catalog, not an error.
	Empty bool `json:"empty,omitzero"`
	// Unrecognized holds up to maxUnrecognized bounded lines that were
	// neither model lines nor known decoration, for diagnostics.
	Unrecognized []string `json:"unrecognized,omitempty"`
}

const maxUnrecognized = 8

// parseModels parses the plain-text output of `models`. It tolerates ANSI
// escape codes, a "Loading models…" spinner line (including \r
// overwrites), CRLF, the "Available models" header, blank lines, the
// trailing "Tip:" line and the "No models available for this account."
// state. Each other line of the form `<id> - <Label>` (split on the first
// " - ", the id a single token) is a model; trailing "(current)",
// "(default)" or "(current, default)" markers become flags.
func parseModels(output string) parsedModels {
	c := parsedModels{Models: []Model{}}
	seen := make(map[string]bool)
	for _, line := range strings.Split(detail.StripANSI(output), "\n") {
		line = visibleLine(line)
		lower := strings.ToLower(line)
		switch {
		case line == "":
			continue
		case strings.HasPrefix(lower, "available models"),
			strings.HasPrefix(lower, "tip:"),
			strings.Contains(lower, "loading models"):
			continue
		case strings.HasPrefix(lower, "no models available"):
			c.Empty = true
			continue
		}
		m, ok := parseModelLine(line)
		if !ok {
			if len(c.Unrecognized) < maxUnrecognized {
				c.Unrecognized = append(c.Unrecognized, detail.Bound(line))
			}
			continue
		}
		key := strings.ToLower(m.ID)
		if seen[key] {
			continue
		}
		seen[key] = true
		c.Models = append(c.Models, m)
	}
	if len(c.Models) > 0 {
		c.Empty = false
	}
	return c
}

// visibleLine returns what a terminal would finally show for one line: the
// last non-empty segment after carriage returns (a spinner redraws with
// \r), trimmed, with a leading BOM dropped.
func visibleLine(line string) string {
	segments := strings.Split(line, "\r")
	for i := len(segments) - 1; i >= 0; i-- {
		if s := strings.TrimSpace(strings.TrimPrefix(segments[i], "\uFEFF")); s != "" {
			return s
		}
	}
	return ""
}

func parseModelLine(line string) (Model, bool) {
	id, label, ok := strings.Cut(line, " - ")
	if !ok {
		// The trimmed line lost the separator's trailing space.
		id, ok = strings.CutSuffix(line, " -")
	}
	id, label = strings.TrimSpace(id), strings.TrimSpace(label)
	if !ok || id == "" || strings.ContainsFunc(id, isSpaceOrControl) {
		return Model{}, false
	}
	m := Model{ID: id}
	m.Label, m.Current, m.Default = splitMarkers(label)
	if m.Label == "" {
		m.Label = id
	}
	return m, true
}

// splitMarkers strips a trailing "(current)", "(default)", "(current,
// default)" (in either order) from label and reports which were present.
func splitMarkers(label string) (rest string, current, isDefault bool) {
	if !strings.HasSuffix(label, ")") {
		return label, false, false
	}
	open := strings.LastIndex(label, "(")
	if open < 0 {
		return label, false, false
	}
	for _, word := range strings.Split(label[open+1:len(label)-1], ",") {
		switch strings.ToLower(strings.TrimSpace(word)) {
		case "current":
			current = true
		case "default":
			isDefault = true
		default:
			return label, false, false // "(Preview)" and the like stay in the label
		}
	}
	return strings.TrimSpace(label[:open]), current, isDefault
}

func isSpaceOrControl(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r)
}
