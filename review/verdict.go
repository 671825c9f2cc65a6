package review

import (
	"bytes"
	"encoding/json/jsontext"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
)

// The verdicts.
const (
	VerdictApprove        = "approve"
	VerdictRequestChanges = "request_changes"
)

// The severities of a finding, most severe first.
const (
	SeverityCritical = "critical"
	SeverityHigh     = "high"
	SeverityMedium   = "medium"
	SeverityLow      = "low"
	SeverityInfo     = "info"
)

// severities returns the severities, most severe first.
func severities() []string {
	return []string{SeverityCritical, SeverityHigh, SeverityMedium, SeverityLow, SeverityInfo}
}

// Verdict is the reply a review must contain (docs/contract.md, "Review").
type Verdict struct {
	Verdict  string    `json:"verdict"`
	Summary  string    `json:"summary"`
	Findings []Finding `json:"findings"`
}

// Finding is one problem the reviewer found. Line is a line of the new
// version of File (1 and up), or 0 for a finding about the whole file; an
// empty File is a finding about the whole change (then Line is 0).
type Finding struct {
	Severity string `json:"severity"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Title    string `json:"title"`
	Body     string `json:"body"`
}

// Bounds of reading a reply.
const (
	// maxScanBytes bounds the bytes the search for the first JSON object
	// may decode over all its attempts, so prose full of braces costs
	// linear time at worst.
	maxScanBytes = 16 << 20
	// maxLine is the largest line number accepted.
	maxLine = 1<<31 - 1
	// excerptBytes bounds a quoted value in a message.
	excerptBytes = 40
)

// ParseVerdict extracts the first JSON object from a review's result text
// (inside prose or a ```json fence: the first '{' that starts a complete
// JSON object; text after it is ignored) and validates it strictly, as
// docs/contract.md, "Review", says: exactly the members of a Verdict and
// of each Finding, no member repeated, none unknown, valid UTF-8.
//
// A missing or invalid object is failure.Unclassified (exit 1), its
// message naming what is wrong and where ("findings[1].severity"),
// quoting at most a short excerpt of one value, never the reply. There is
// no fallback to prose.
func ParseVerdict(resultText string) (Verdict, error) {
	obj, ok := firstObject(resultText)
	if !ok {
		return Verdict{}, failure.New(failure.Unclassified,
			"the review reply holds no JSON object: the agent must reply with one {verdict, summary, findings} object (the result text was %d bytes)", len(resultText))
	}
	v, err := validate(obj)
	if err != nil {
		return Verdict{}, failure.New(failure.Unclassified, "the review reply's JSON object is invalid: %s", err.Error())
	}
	return v, nil
}

// firstObject returns the first complete JSON object in text: at the first
// '{' where one starts. Duplicate names and invalid UTF-8 do not stop it
// (validate refuses them with a clear message rather than the search
// moving on to an object nested inside).
func firstObject(text string) (string, bool) {
	b := []byte(text)
	budget := int64(maxScanBytes)
	for i := 0; i < len(b) && budget > 0; {
		j := bytes.IndexByte(b[i:], '{')
		if j < 0 {
			break
		}
		i += j
		r := bytes.NewReader(b[i:])
		dec := jsontext.NewDecoder(r, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
		v, err := dec.ReadValue()
		if err == nil {
			return string(v), true
		}
		budget -= max(r.Size()-int64(r.Len()), 1) // what the decoder took
		i++
	}
	return "", false
}

// validate decodes obj (one complete JSON object) into a Verdict,
// strictly.
func validate(obj string) (Verdict, error) {
	if !utf8.ValidString(obj) {
		return Verdict{}, errors.New("it is not valid UTF-8")
	}
	dec := jsontext.NewDecoder(strings.NewReader(obj), jsontext.AllowDuplicateNames(true))
	var v Verdict
	err := readObject(dec, "", "a verdict", []string{"verdict", "summary", "findings"}, func(name, path string) (err error) {
		switch name {
		case "verdict":
			if v.Verdict, err = readString(dec, path); err == nil && v.Verdict != VerdictApprove && v.Verdict != VerdictRequestChanges {
				err = fmt.Errorf("verdict is %s; want approve or request_changes", quote(v.Verdict))
			}
		case "summary":
			if v.Summary, err = readString(dec, path); err == nil && strings.TrimSpace(v.Summary) == "" {
				err = errors.New("summary is empty")
			}
		case "findings":
			v.Findings, err = readFindings(dec)
		}
		return err
	})
	return v, err
}

// readObject reads one object at path at, calling member for each of
// members (each once, all of them), with its name (unescaped) and path;
// member must read the value. A name that is not one of members is
// refused as not a member of what.
func readObject(dec *jsontext.Decoder, at, what string, members []string, member func(name, path string) error) error {
	if dec.PeekKind() != '{' {
		return typeProblem(dec, at, "an object")
	}
	if _, err := dec.ReadToken(); err != nil {
		return syntax(err)
	}
	seen := map[string]bool{}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return syntax(err)
		}
		name := tok.String()
		shown := name
		if !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) || len(name) > excerptBytes {
			shown = quote(name)
		}
		path := join(at, shown)
		switch {
		case seen[name]:
			return fmt.Errorf("%s is repeated", path)
		case !slices.Contains(members, name):
			return fmt.Errorf("%s is not a member of %s (want %s)", path, what, strings.Join(members, ", "))
		}
		seen[name] = true
		if err := member(name, path); err != nil {
			return err
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return syntax(err)
	}
	for _, name := range members {
		if !seen[name] {
			return fmt.Errorf("%s is missing", join(at, name))
		}
	}
	return nil
}

// join is the path of member name of the value at path at.
func join(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}

func readFindings(dec *jsontext.Decoder) ([]Finding, error) {
	if dec.PeekKind() != '[' {
		return nil, typeProblem(dec, "findings", "an array")
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, syntax(err)
	}
	out := []Finding{}
	for i := 0; dec.PeekKind() != ']'; i++ {
		f, err := readFinding(dec, "findings["+strconv.Itoa(i)+"]")
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, syntax(err)
	}
	return out, nil
}

func readFinding(dec *jsontext.Decoder, at string) (Finding, error) {
	var f Finding
	err := readObject(dec, at, "a finding", []string{"severity", "file", "line", "title", "body"}, func(name, path string) (err error) {
		switch name {
		case "severity":
			if f.Severity, err = readString(dec, path); err == nil && !slices.Contains(severities(), f.Severity) {
				err = fmt.Errorf("%s is %s; want one of %s", path, quote(f.Severity), strings.Join(severities(), ", "))
			}
		case "file":
			if f.File, err = readString(dec, path); err == nil {
				err = singleLine(path, f.File)
			}
		case "line":
			f.Line, err = readLine(dec, path)
		case "title":
			if f.Title, err = readString(dec, path); err == nil && strings.TrimSpace(f.Title) == "" {
				err = fmt.Errorf("%s is empty", path)
			} else if err == nil {
				err = singleLine(path, f.Title)
			}
		case "body":
			f.Body, err = readString(dec, path)
		}
		return err
	})
	if err == nil && f.File == "" && f.Line != 0 {
		err = fmt.Errorf("%s.line is %d but %s.file is empty (a change-wide finding has line 0)", at, f.Line, at)
	}
	return f, err
}

// singleLine refuses a control character (a newline, a carriage return,
// an escape) in s, the value at path of a field that is one line of text.
func singleLine(path, s string) error {
	if i := strings.IndexFunc(s, unicode.IsControl); i >= 0 {
		return fmt.Errorf("%s holds a control character at byte %d; it is one line of text", path, i)
	}
	return nil
}

// readString reads a string value.
func readString(dec *jsontext.Decoder, path string) (string, error) {
	if dec.PeekKind() != '"' {
		return "", typeProblem(dec, path, "a string")
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return "", syntax(err)
	}
	return tok.String(), nil
}

// readLine reads a line number: an integer literal from 0 to maxLine
// (no fraction, exponent or sign).
func readLine(dec *jsontext.Decoder, path string) (int, error) {
	if dec.PeekKind() != '0' {
		return 0, typeProblem(dec, path, "an integer (0 for the whole file)")
	}
	raw, err := dec.ReadValue()
	if err != nil {
		return 0, syntax(err)
	}
	s := string(raw)
	n, perr := strconv.Atoi(s)
	if perr != nil || n < 0 || n > maxLine || strings.ContainsAny(s, ".eE+-") {
		return 0, fmt.Errorf("%s is %s; want an integer from 0 (the whole file) to %d", path, quote(s), maxLine)
	}
	return n, nil
}

// typeProblem reports the value at path as the wrong type.
func typeProblem(dec *jsontext.Decoder, path, want string) error {
	return fmt.Errorf("%s is %s; want %s", path, kindName(dec.PeekKind()), want)
}

func kindName(k jsontext.Kind) string {
	names := map[jsontext.Kind]string{'n': "null", 't': "a boolean", 'f': "a boolean", '"': "a string",
		'0': "a number", '{': "an object", '[': "an array"}
	if name, ok := names[k]; ok {
		return name
	}
	return "missing"
}

// syntax wraps a decoder error (not expected: the object was read whole
// once) without quoting the input.
func syntax(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("it ends early")
	}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		return fmt.Errorf("it is not valid JSON at byte %d", se.ByteOffset)
	}
	return errors.New("it is not valid JSON")
}

// quote is a bounded, escaped excerpt of a value for a message.
func quote(s string) string {
	return strconv.Quote(detail.Cut(s, excerptBytes))
}
