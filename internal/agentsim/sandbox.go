package agentsim

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"os"
	"path/filepath"
	"strings"
)

// sandboxPolicy is what the simulator reads of $HOME/.cursor/sandbox.json
// (cursor.com/docs/reference/sandbox.md): the type and the extra
// read-write paths. It models writes only: a write is allowed inside the
// workspace or an additionalReadwritePaths entry under workspace_readwrite
// (the default), and nowhere under workspace_readonly. Temporary
// directories, the read boundary and the network are not modelled.
type sandboxPolicy struct {
	Type                     string   `json:"type"`
	AdditionalReadwritePaths []string `json:"additionalReadwritePaths"`
}

// loadSandboxPolicy reads the policy of a `--sandbox enabled` run; a
// missing or unreadable file is the documented default.
func (s *sim) loadSandboxPolicy() sandboxPolicy {
	p := sandboxPolicy{Type: "workspace_readwrite"}
	data, err := os.ReadFile(filepath.Join(s.homeDir(), ".cursor", "sandbox.json"))
	if err != nil {
		return p
	}
	// Read as Node's JSON.parse reads it: names match exactly, a member
	// given twice keeps its last value, invalid UTF-8 becomes U+FFFD.
	if json.Unmarshal(data, &p, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)) != nil || p.Type == "" {
		p.Type = "workspace_readwrite"
	}
	return p
}

// allowsWrite reports whether the policy lets a tool write path, and why
// not.
func (p sandboxPolicy) allowsWrite(workspace, path string) (bool, string) {
	if p.Type == "insecure_none" {
		return true, ""
	}
	if p.Type == "workspace_readonly" {
		return false, "Sandbox: write access to " + path + " is denied: the sandbox policy workspace_readonly allows no writes"
	}
	for _, root := range append([]string{workspace}, p.AdditionalReadwritePaths...) {
		if within(root, path) {
			return true, ""
		}
	}
	return false, "Sandbox: write access to " + path + " is denied: it is outside the workspace"
}

// within reports whether path is root or below it.
func within(root, path string) bool {
	rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Paths the sandbox-write-outside scenario edits.
const (
	SandboxInsideFile  = "sandbox-inside.txt"  // in the workspace
	SandboxOutsideFile = "sandbox-outside.txt" // in the workspace's parent directory
)

// sandboxWrites plays the sandbox-write-outside scenario's tool calls: an
// edit inside the workspace and one outside it, each completed with what
// the sandbox decides (no file is written). Without --sandbox enabled
// both succeed.
func (t *turn) sandboxWrites(workspace string) {
	policy := sandboxPolicy{Type: "insecure_none"}
	if t.inv.sandbox == "enabled" {
		policy = t.s.loadSandboxPolicy()
	}
	calls := []struct{ id, path string }{
		{"toolu_edit_in", filepath.Join(workspace, SandboxInsideFile)},
		{"toolu_edit_out", filepath.Join(filepath.Dir(workspace), SandboxOutsideFile)},
	}
	for _, c := range calls {
		result := obj{{"success", obj{{"path", c.path}, {"linesAdded", 1}, {"linesRemoved", 0}}}}
		if ok, reason := policy.allowsWrite(workspace, c.path); !ok {
			result = obj{{"rejected", obj{{"reason", reason}}}}
		}
		t.toolCall(c.id, "mc_1", "editToolCall", obj{{"path", c.path}, {"streamContent", "hello\n"}}, result)
	}
}
