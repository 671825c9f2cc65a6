package fallback

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cursorkit/cursorkit/failure"
)

// Message is one message of a conversation, as a transcript carries it:
// its role and the text of its text blocks. Tool and thinking blocks never
// make it into a Message.
type Message struct {
	Role string // "user", "assistant" or "system"
	Text string
}

// The transcript's bounds (docs/contract.md, "Cross-runtime fallback").
// Characters are Unicode code points; a cut never splits one.
const (
	// MaxTurns is how many of the last messages a transcript may carry.
	MaxTurns = 10
	// MaxTurnChars bounds one message's whole `role: text` line, its
	// truncation marker included.
	MaxTurnChars = 2000
	// MaxTotalChars bounds the transcript, the newlines between its lines
	// included (the header and the current prompt are not counted).
	MaxTotalChars = 12000
	// TruncatedMarker ends a line that was cut.
	TruncatedMarker = " [truncated]"
)

// maxTranscriptFile bounds a transcript document: ten turns of 2,000
// characters are far less, but a caller may keep a whole conversation.
const maxTranscriptFile = 32 << 20

// ParseTranscript reads a conversation as a JSON array of messages, each
// {"role": ROLE, "content": CONTENT}, CONTENT either a string or an array
// of blocks {"type": TYPE, ...}: the "text" of "text" blocks is kept, every
// other block (tool_use, tool_result, thinking, image...) is left out.
// Members other than role and content are ignored. A message whose role is
// not user, assistant or system, whose content is neither, or a text block
// whose text is not a string, makes the whole document malformed: a
// failure.Input error naming the message's index and what was wrong,
// never its text. Messages left with no text are dropped.
func ParseTranscript(data []byte) ([]Message, error) {
	if len(data) > maxTranscriptFile {
		return nil, failure.New(failure.Input, "the transcript is longer than %d bytes", maxTranscriptFile)
	}
	// A document that is not an array (null included, which would
	// otherwise decode as no messages) is malformed.
	if v := bytes.TrimLeft(data, " \t\r\n"); len(v) > 0 && v[0] != '[' {
		return nil, failure.New(failure.Input, "the transcript is not a JSON array of {role, content} messages")
	}
	var raw []struct {
		Role    jsontext.Value `json:"role"`
		Content jsontext.Value `json:"content"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, failure.New(failure.Input, "the transcript is not a JSON array of {role, content} messages: %s", offsetOnly(err))
	}
	var out []Message
	for i, m := range raw {
		var role string
		if err := json.Unmarshal(m.Role, &role); err != nil || !validRole(role) {
			return nil, failure.New(failure.Input, "transcript message %d: role must be \"user\", \"assistant\" or \"system\"", i)
		}
		text, err := contentText(m.Content)
		if err != nil {
			return nil, failure.New(failure.Input, "transcript message %d: %s", i, err.Error())
		}
		if strings.TrimSpace(text) != "" {
			out = append(out, Message{Role: role, Text: text})
		}
	}
	return out, nil
}

func validRole(r string) bool { return r == "user" || r == "assistant" || r == "system" }

// contentText is the text of a message's content: a string, or the texts
// of its text blocks joined by newlines.
func contentText(v jsontext.Value) (string, error) {
	switch v.Kind() {
	case '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", errors.New("content is not a valid string")
		}
		return s, nil
	case '[':
		var blocks []struct {
			Type jsontext.Value `json:"type"`
			Text jsontext.Value `json:"text"`
		}
		if err := json.Unmarshal(v, &blocks); err != nil {
			return "", errors.New("content blocks must be objects")
		}
		var texts []string
		for j, b := range blocks {
			var typ string
			if json.Unmarshal(b.Type, &typ) != nil {
				return "", errors.New("content block " + strconv.Itoa(j) + " has no string type")
			}
			if typ != "text" {
				continue // tool and thinking blocks never transfer
			}
			var text string
			if json.Unmarshal(b.Text, &text) != nil {
				return "", errors.New("text block " + strconv.Itoa(j) + " has no string text")
			}
			texts = append(texts, text)
		}
		return strings.Join(texts, "\n"), nil
	}
	return "", errors.New("content must be a string or an array of blocks")
}

// offsetOnly is a JSON error without any of the document's text: where it
// broke, by byte offset, when the error says.
func offsetOnly(err error) string {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		return "syntax error at byte " + strconv.Itoa(int(se.ByteOffset))
	}
	var te *json.SemanticError
	if errors.As(err, &te) {
		return "unexpected JSON kind at byte " + strconv.Itoa(int(te.ByteOffset))
	}
	return "unreadable"
}

// Transcript renders the last messages of history as the text-only block
// the first swapped prompt carries: one `role: text` line per message (its
// text on one line: line breaks become spaces), at most MaxTurns lines of at
// most MaxTurnChars characters each and MaxTotalChars in all, newest kept
// first, each cut line ending in TruncatedMarker. ok is false when nothing
// transfers (no message has text).
func Transcript(history []Message) (text string, ok bool) {
	var lines []string
	total := 0
	for i := len(history) - 1; i >= 0 && len(lines) < MaxTurns; i-- {
		m := history[i]
		if !validRole(m.Role) || strings.TrimSpace(m.Text) == "" {
			continue
		}
		line := cutLine(m.Role+": "+oneLine(m.Text), MaxTurnChars)
		room := MaxTotalChars - total
		if len(lines) > 0 {
			room-- // the newline before the lines already taken
		}
		if n := utf8.RuneCountInString(line); n > room {
			if room <= utf8.RuneCountInString(m.Role+": ")+utf8.RuneCountInString(TruncatedMarker) {
				break
			}
			line = cutLine(line, room)
		}
		if len(lines) > 0 {
			total++
		}
		total += utf8.RuneCountInString(line)
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return "", false
	}
	for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
		lines[i], lines[j] = lines[j], lines[i]
	}
	return strings.Join(lines, "\n"), true
}

// oneLine turns the text's line breaks into spaces, so one message is one
// line and no message can forge another's role prefix: every mandatory
// break of Unicode's line breaking (CR, LF, VT, FF, NEL, LS, PS), not only
// CR and LF, since a model may read any of them as a new line.
func oneLine(s string) string {
	if !strings.ContainsAny(s, lineBreaks) {
		return s
	}
	return lineBreaker.Replace(s)
}

const lineBreaks = "\r\n\v\f\u0085\u2028\u2029"

var lineBreaker = strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ", "\v", " ", "\f", " ",
	"\u0085", " ", "\u2028", " ", "\u2029", " ")

// cutLine returns line when it has at most max characters, else its
// start and TruncatedMarker, max characters in all.
func cutLine(line string, max int) string {
	if utf8.RuneCountInString(line) <= max {
		return line
	}
	keep := max - utf8.RuneCountInString(TruncatedMarker)
	i, n := 0, 0
	for n < keep {
		_, size := utf8.DecodeRuneInString(line[i:])
		i += size
		n++
	}
	return line[:i] + TruncatedMarker
}

// Header is the first line of the block a swapped prompt carries; its
// %s is provider/model.
const headerFormat = "[Transferred prior conversation from %s; partial, text-only, and non-authoritative]"

// CurrentPromptLabel separates the transcript from the prompt.
const CurrentPromptLabel = "[Current prompt]"

// WithTranscript returns prompt prefixed with the transcript of history,
// labelled as coming from provider/model (model "" is written as
// "default"):
//
//	[Transferred prior conversation from PROVIDER/MODEL; partial, text-only, and non-authoritative]
//	TRANSCRIPT
//
//	[Current prompt]
//	PROMPT
//
// and whether a transcript went with it; without one (no history, or no
// text in it) the prompt is returned unchanged.
func WithTranscript(prompt string, history []Message, provider, model string) (string, bool) {
	text, ok := Transcript(history)
	if !ok {
		return prompt, false
	}
	if model == "" {
		model = "default"
	}
	var b strings.Builder
	b.Grow(len(text) + len(prompt) + 128)
	b.WriteString(strings.Replace(headerFormat, "%s", provider+"/"+model, 1))
	b.WriteByte('\n')
	b.WriteString(text)
	b.WriteString("\n\n")
	b.WriteString(CurrentPromptLabel)
	b.WriteByte('\n')
	b.WriteString(prompt)
	return b.String(), true
}
