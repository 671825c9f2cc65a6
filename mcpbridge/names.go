package mcpbridge

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"slices"
	"strings"
)

// Own returns the name a tool of s was registered under, given the name
// the agent calls it by on s (Prefix and the Tool's name, one of
// s.Tools), and whether s publishes it. Each agent first takes off its own
// wrapping of the server (mcp__SERVER__, mcp_SERVER_, Codex's
// server field); this is the rule every agent shares, so that every
// decoder reports a bridged call by the tool's own name.
func (s *Server) Own(name string) (string, bool) {
	if s == nil || !slices.Contains(s.Tools, name) {
		return "", false
	}
	own, ok := strings.CutPrefix(name, Prefix)
	return own, ok && own != ""
}

// ResultText returns the text of a bridged call's result as an agent
// reports it: a JSON string as it is, or the text of every "text" block
// of an MCP content array (or of an object's "content" member, Codex's
// CallToolResult), joined by newlines. ok is false for anything else,
// which the caller reports as the agent did.
func ResultText(v jsontext.Value) (text string, ok bool) {
	switch v.Kind() {
	case '"':
		var s string
		if json.Unmarshal(v, &s) != nil {
			return "", false
		}
		return s, true
	case '{':
		var r struct {
			Content jsontext.Value `json:"content"`
		}
		if json.Unmarshal(v, &r) != nil || r.Content.Kind() != '[' {
			return "", false
		}
		v = r.Content
	case '[':
	default:
		return "", false
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(v, &blocks) != nil {
		return "", false
	}
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n"), true
}
