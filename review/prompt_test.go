package review

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fileDiff(path string, lines int) string {
	var b strings.Builder
	b.WriteString("diff --git a/" + path + " b/" + path + "\n--- a/" + path + "\n+++ b/" + path + "\n@@ -1 +1," + strconv.Itoa(lines) + " @@\n")
	for i := range lines {
		b.WriteString("+line " + strconv.Itoa(i) + "\n")
	}
	return b.String()
}

func diffOf(files ...string) Diff {
	var text strings.Builder
	for _, f := range files {
		text.WriteString(fileDiff(f, 20))
	}
	return Diff{Scope: ScopeWorkingTree, Requested: ScopeAuto, Base: "HEAD", Files: files, Text: text.String(), Size: int64(text.Len())}
}

func TestPrompt(t *testing.T) {
	small := diffOf("a.go", "b.go", "c.go")
	sectionLen := len(fileDiff("a.go", 20))
	tests := []struct {
		name         string
		d            Diff
		focus        string
		limit        int
		wantCut      bool
		wantNotShown []string
		contains     []string
		excludes     []string
	}{
		{name: "fits, no focus", d: small, contains: []string{small.Text, "against HEAD: staged, unstaged and untracked files (3 changed files)", `"verdict": "approve" or "request_changes"`, `"critical" | "high" | "medium" | "low" | "info"`},
			excludes: []string{"[diff cut", "focus on", "{{"}},
		{name: "focus is quoted", d: small, focus: "  error handling\nand {{DIFF}} placeholders  ", contains: []string{"focus on this", "> error handling\n> and {{DIFF}} placeholders\n"}},
		{name: "cut at a file boundary", d: small, limit: 2*sectionLen + 10, wantCut: true, wantNotShown: []string{"c.go"},
			contains: []string{"[diff cut: " + strconv.Itoa(2*sectionLen) + " of " + strconv.Itoa(3*sectionLen) + " bytes shown; files not shown in full: c.go;", fileDiff("b.go", 20)},
			excludes: []string{"b/c.go"}},
		{name: "first file larger than the limit", d: small, limit: 100, wantCut: true, wantNotShown: []string{"a.go", "b.go", "c.go"},
			contains: []string{"files not shown in full: a.go, b.go, c.go;", "diff --git a/a.go b/a.go\n"}, excludes: []string{"line 19"}},
		{name: "truncated at collection", d: func() Diff {
			d := small
			d.Truncated = true
			d.Size = 1 << 30
			d.Files = append(d.Files, "d.bin")
			return d
		}(),
			wantCut: true, wantNotShown: []string{"d.bin"}, contains: []string{"[diff cut: " + strconv.Itoa(3*sectionLen) + " of 1073741824 bytes shown; files not shown in full: d.bin;"}},
		{name: "branch", d: Diff{Scope: ScopeBranch, Base: "origin/main", Files: []string{"x"}, Text: fileDiff("x", 1), Size: int64(len(fileDiff("x", 1)))},
			contains: []string{"since its merge base with origin/main (1 changed file)"}},
		{name: "backticks in the diff get a longer fence", d: func() Diff {
			d := diffOf("README.md")
			d.Text += "+````go\n"
			return d
		}(), contains: []string{"`````diff\n", "\n`````\n"}},
		{name: "quoted paths", d: Diff{Scope: ScopeWorkingTree, Base: "HEAD", Files: []string{"a\"b.txt", "z.txt"},
			Text: "diff --git \"a/a\\\"b.txt\" \"b/a\\\"b.txt\"\n+x\n" + fileDiff("z.txt", 40), Size: 1 << 20},
			limit: 60, wantCut: true, wantNotShown: []string{"z.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPromptLimit(tt.d, tt.focus, tt.limit)
			assert.Equal(t, tt.wantCut, p.Cut)
			if tt.wantCut {
				assert.Equal(t, tt.wantNotShown, p.NotShown)
				assert.Contains(t, p.Text, "[diff cut: ")
				assert.Less(t, p.ShownBytes, p.TotalBytes)
			} else {
				assert.Empty(t, p.NotShown)
				assert.Equal(t, p.ShownBytes, p.TotalBytes)
			}
			limit := tt.limit
			if limit <= 0 {
				limit = defaultDiffLimit
			}
			assert.LessOrEqual(t, p.ShownBytes, int64(limit))
			for _, s := range tt.contains {
				assert.Contains(t, p.Text, s)
			}
			for _, s := range tt.excludes {
				assert.NotContains(t, p.Text, s)
			}
		})
	}
}

// TestPromptNeverCutsSilently: whatever the limit, a prompt holds the whole
// diff or states the cut.
func TestPromptNeverCutsSilently(t *testing.T) {
	d := diffOf("a.go", "b.go", "c.go", "d.go")
	for limit := 1; limit < len(d.Text)+10; limit += 37 {
		p := newPromptLimit(d, "", limit)
		if p.Cut {
			require.Contains(t, p.Text, "[diff cut: "+strconv.FormatInt(p.ShownBytes, 10)+" of "+strconv.Itoa(len(d.Text))+" bytes shown")
		} else {
			require.Contains(t, p.Text, d.Text)
		}
		require.LessOrEqual(t, p.ShownBytes, int64(limit))
	}
}

func TestDefaultLimit(t *testing.T) {
	big := diffOf()
	big.Files = []string{"big.txt"}
	big.Text = fileDiff("big.txt", defaultDiffLimit/8)
	big.Size = int64(len(big.Text))
	p := NewPrompt(big, "")
	assert.True(t, p.Cut)
	assert.LessOrEqual(t, p.ShownBytes, int64(defaultDiffLimit))
	assert.Equal(t, []string{"big.txt"}, p.NotShown)
}

func FuzzCutDiff(f *testing.F) {
	f.Add(fileDiff("a", 3)+fileDiff("b", 2), 50)
	f.Add("x\ndiff --git a/q b/q\n", 3)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		if limit <= 0 {
			limit = 1
		}
		shown, complete := cutDiff(text, limit)
		require.True(t, strings.HasPrefix(text, shown))
		require.LessOrEqual(t, len(shown), max(limit, 0))
		if len(text) <= limit {
			require.Equal(t, text, shown)
		}
		for path := range complete {
			require.NotEmpty(t, path)
		}
	})
}
