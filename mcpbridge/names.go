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
// wrapping of the server (Called; Codex's server field); this is the rule
// every agent shares, so that every decoder reports a bridged call by the
// tool's own name.
func (s *Server) Own(name string) (string, bool) {
	if s == nil || !slices.Contains(s.Tools, name) {
		return "", false
	}
	own, ok := strings.CutPrefix(name, Prefix)
	return own, ok && own != ""
}

// Called is Own for an agent that names the tools of an MCP server
// before + the server's name + after + the tool's name (Claude Code's
// mcp__SERVER__TOOL, Gemini CLI's mcp_SERVER_TOOL): onServer reports
// whether name is a tool of s at all, published or not, for a call of the
// server that s does not publish is the policy's to refuse.
func (s *Server) Called(name, before, after string) (own string, onServer, published bool) {
	if s == nil {
		return "", false, false
	}
	rest, ok := strings.CutPrefix(name, before+s.Name+after)
	if !ok {
		return "", false, false
	}
	own, published = s.Own(rest)
	return own, true, published
}

// ResultString returns the text of a bridged call's result as an agent
// reports it, as a JSON string: a JSON string as it is, or the text of
// every "text" block of an MCP content array (or of an object's "content"
// member, Codex's CallToolResult), joined by newlines. ok is false for
// anything else, which the caller reports as the agent did.
func ResultString(v jsontext.Value) (jsontext.Value, bool) {
	text, ok := resultText(v)
	if !ok {
		return nil, false
	}
	q, err := jsontext.AppendQuote(nil, text)
	return q, err == nil
}

func resultText(v jsontext.Value) (text string, ok bool) {
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
