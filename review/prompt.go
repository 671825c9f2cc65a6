package review

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// promptTemplate is the review prompt (docs/contract.md, "Review"). Its
// placeholders are replaced in one pass, so nothing in the diff or the
// focus is ever read as a placeholder.
//
//go:embed prompt.md
var promptTemplate string

// defaultDiffLimit is how many bytes of diff a prompt holds by default
// (docs/contract.md, "Review"): 256 KiB, about 64k tokens, which leaves
// the model room to read files and reply.
const defaultDiffLimit = 256 << 10

// maxNamesInMarker bounds the files the cut marker names.
const maxNamesInMarker = 40

// Prompt is a review prompt (Text, for the agent's stdin) and what it
// left out. Cut reports that the diff was cut, which the prompt states in
// a marker line and the caller should warn of: ShownBytes of the diff are
// in Text, of TotalBytes (Diff.Size, more than the collected text when
// collection was truncated too); the diffs of NotShown are not in full.
type Prompt struct {
	Text                   string
	Cut                    bool
	ShownBytes, TotalBytes int64
	NotShown               []string
}

// NewPrompt builds the review prompt for d with defaultDiffLimit.
func NewPrompt(d Diff, focus string) Prompt { return newPromptLimit(d, focus, defaultDiffLimit) }

// newPromptLimit builds the review prompt for d, holding at most limit
// bytes of diff (defaultDiffLimit when limit ≤ 0), with focus, trimmed,
// quoted in when not empty. A diff over the limit, or one Collect already
// truncated, is cut at a file boundary when it can be (else at a line
// boundary inside the first file), never silently: the prompt states
// "[diff cut: N of M bytes shown; files not shown in full: ...]".
func newPromptLimit(d Diff, focus string, limit int) Prompt {
	if limit <= 0 {
		limit = defaultDiffLimit
	}
	shown, complete := cutDiff(d.Text, limit)
	total := max(d.Size, int64(len(d.Text)))
	p := Prompt{ShownBytes: int64(len(shown)), TotalBytes: total, NotShown: []string{}}
	p.Cut = d.Truncated || len(shown) < len(d.Text)
	marker := ""
	if p.Cut {
		for _, f := range d.Files {
			if !complete[f] {
				p.NotShown = append(p.NotShown, f)
			}
		}
		marker = cutMarker(p) + "\n\n"
	}
	text := shown
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	p.Text = strings.NewReplacer("{{SCOPE}}", describe(d), "{{FOCUS}}", focusText(focus), "{{CUT}}", marker,
		"{{FENCE}}", fenceFor(shown), "{{DIFF}}", text).Replace(promptTemplate)
	return p
}

// describe says what the diff compares, for the prompt.
func describe(d Diff) string {
	n := strconv.Itoa(len(d.Files)) + " changed file"
	if len(d.Files) != 1 {
		n += "s"
	}
	switch d.Scope {
	case ScopeBranch:
		return "the commits of the current branch since its merge base with " + d.Base + " (" + n + ")"
	case ScopeWorkingTree:
		if d.Base == "" {
			return "every file of a repository without commits yet (" + n + ")"
		}
		return "the uncommitted changes of the working tree against HEAD: staged, unstaged and untracked files (" + n + ")"
	}
	return n
}

func focusText(focus string) string {
	focus = strings.TrimSpace(focus)
	if focus == "" {
		return ""
	}
	return "\nThe requester asks you to focus on this (still report anything serious you see):\n\n" + quoteBlock(focus) + "\n"
}

// quoteBlock prefixes every line with "> ".
func quoteBlock(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("> "+l, " ")
	}
	return strings.Join(lines, "\n")
}

// cutMarker is the line stating the cut.
func cutMarker(p Prompt) string {
	m := fmt.Sprintf("[diff cut: %d of %d bytes shown", p.ShownBytes, p.TotalBytes)
	if len(p.NotShown) > 0 {
		names := p.NotShown[:min(len(p.NotShown), maxNamesInMarker)]
		m += "; files not shown in full: " + strings.Join(names, ", ")
		if more := len(p.NotShown) - len(names); more > 0 {
			m += fmt.Sprintf(" and %d more", more)
		}
	}
	return m + "; read those files yourself if you need them]"
}

// fenceFor returns a backtick fence longer than any backtick run in s.
func fenceFor(s string) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// cutDiff returns the longest prefix of text within limit bytes made of
// whole file sections ("diff --git " headers start them), else the first
// section cut at its last line boundary within the limit (else at a rune
// boundary), and the set of files whose sections are wholly in it.
func cutDiff(text string, limit int) (string, map[string]bool) {
	complete := map[string]bool{}
	n := 0
	for _, s := range sections(text) {
		if n+len(s.text) > limit {
			break
		}
		n += len(s.text)
		if s.path != "" {
			complete[s.path] = true
		}
	}
	if n > 0 || len(text) == 0 {
		return text[:n], complete
	}
	cut := text[:limit]
	if i := strings.LastIndexByte(cut, '\n'); i >= 0 {
		return cut[:i+1], complete
	}
	for len(cut) > 0 && !utf8.RuneStart(text[len(cut)]) {
		cut = cut[:len(cut)-1]
	}
	return cut, complete
}

// section is one file's part of a diff.
type section struct {
	path string
	text string
}

// sections splits a diff before each "diff --git " header line; text
// before the first header is a section without a path.
func sections(text string) []section {
	var out []section
	for text != "" {
		end := len(text)
		if j := strings.Index(text[1:], "\ndiff --git "); j >= 0 {
			end = j + 2
		}
		out = append(out, section{path: headerPath(text[:end]), text: text[:end]})
		text = text[end:]
	}
	return out
}

// headerPath is the b/ side of a section's "diff --git a/X b/Y" header:
// Y, unquoted when git quoted it; "" when the section has no header.
func headerPath(sec string) string {
	line, _, _ := strings.Cut(sec, "\n")
	rest, ok := strings.CutPrefix(line, "diff --git ")
	if !ok {
		return ""
	}
	if strings.HasSuffix(rest, `"`) {
		if i := strings.LastIndex(rest, ` "b/`); i >= 0 {
			if s, err := strconv.Unquote(rest[i+1:]); err == nil {
				return strings.TrimPrefix(s, "b/")
			}
		}
	}
	if i := strings.LastIndex(rest, " b/"); i >= 0 {
		return rest[i+3:]
	}
	return ""
}
