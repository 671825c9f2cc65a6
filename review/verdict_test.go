package review

import (
	"encoding/json/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/agentsim"
)

const validObject = `{"verdict":"request_changes","summary":"Two problems.","findings":[` +
	`{"severity":"high","file":"main.go","line":12,"title":"Nil map write","body":"m is nil {here}."},` +
	`{"severity":"info","file":"","line":0,"title":"Docs","body":""}]}`

var validVerdict = Verdict{Verdict: VerdictRequestChanges, Summary: "Two problems.", Findings: []Finding{
	{Severity: SeverityHigh, File: "main.go", Line: 12, Title: "Nil map write", Body: "m is nil {here}."},
	{Severity: SeverityInfo, Title: "Docs"},
}}

func TestParseVerdict(t *testing.T) {
	approve := Verdict{Verdict: VerdictApprove, Summary: "Fine.", Findings: []Finding{}}
	tests := []struct {
		name    string
		text    string
		want    Verdict
		wantErr string // a part of the message; "" for success
	}{
		{name: "bare object", text: validObject, want: validVerdict},
		{name: "inside prose and a json fence", text: "Here is my review.\n\n```json\n" + validObject + "\n```\n\nThanks {for reading}.", want: validVerdict},
		{name: "braces in prose before it", text: "Use {x} and {\"a\": } and } { then:\n" + validObject, want: validVerdict},
		{name: "strings with braces", text: `{"verdict":"approve","summary":"a } b { c \" }","findings":[]}`,
			want: Verdict{Verdict: VerdictApprove, Summary: `a } b { c " }`, Findings: []Finding{}}},
		{name: "the first object wins", text: `{"verdict":"approve","summary":"Fine.","findings":[]} {"verdict":"request_changes"}`, want: approve},
		{name: "escaped names", text: `{"\u0076erdict":"approve","summary":"Fine.","findings":[]}`, want: approve},
		{name: "whitespace everywhere", text: "{\n \"verdict\" : \"approve\" ,\r\n\t\"summary\":\"Fine.\", \"findings\" : [ ] }", want: approve},
		{name: "line 0 for a file", text: `{"verdict":"approve","summary":"ok","findings":[{"severity":"low","file":"a.go","line":0,"title":"t","body":"b"}]}`,
			want: Verdict{Verdict: VerdictApprove, Summary: "ok", Findings: []Finding{{Severity: SeverityLow, File: "a.go", Title: "t", Body: "b"}}}},

		{name: "empty text", text: "", wantErr: "holds no JSON object"},
		{name: "prose only", text: "Looks good to me! Approve.", wantErr: "(the result text was 26 bytes)"},
		{name: "unterminated object", text: `Here: {"verdict":"approve","summary":"x"`, wantErr: "holds no JSON object"},
		{name: "an array is not an object", text: `[{"verdict"]`, wantErr: "holds no JSON object"},
		{name: "first object is something else", text: `Config: {"a":1}. Verdict: ` + validObject, wantErr: "invalid: a is not a member of a verdict"},
		{name: "verdict maybe", text: `{"verdict":"maybe","summary":"x","findings":[]}`, wantErr: `verdict is "maybe"; want approve or request_changes`},
		{name: "verdict wrong case", text: `{"verdict":"Approve","summary":"x","findings":[]}`, wantErr: `verdict is "Approve"`},
		{name: "verdict null", text: `{"verdict":null,"summary":"x","findings":[]}`, wantErr: "verdict is null; want a string"},
		{name: "verdict missing", text: `{"summary":"x","findings":[]}`, wantErr: "verdict is missing"},
		{name: "summary empty", text: `{"verdict":"approve","summary":"  ","findings":[]}`, wantErr: "summary is empty"},
		{name: "summary a number", text: `{"verdict":"approve","summary":1,"findings":[]}`, wantErr: "summary is a number; want a string"},
		{name: "findings missing", text: `{"verdict":"approve","summary":"x"}`, wantErr: "findings is missing"},
		{name: "findings null", text: `{"verdict":"approve","summary":"x","findings":null}`, wantErr: "findings is null; want an array"},
		{name: "findings an object", text: `{"verdict":"approve","summary":"x","findings":{}}`, wantErr: "findings is an object; want an array"},
		{name: "finding not an object", text: `{"verdict":"approve","summary":"x","findings":["bad"]}`, wantErr: "findings[0] is a string; want an object"},
		{name: "unknown member", text: `{"verdict":"approve","summary":"x","findings":[],"score":3}`, wantErr: "score is not a member of a verdict"},
		{name: "repeated member", text: `{"verdict":"approve","summary":"x","findings":[],"verdict":"approve"}`, wantErr: "verdict is repeated"},
		{name: "repeated escaped member", text: `{"verdict":"approve","summary":"x","findings":[],"\u0073ummary":"y"}`, wantErr: "summary is repeated"},
		{name: "severity unknown", text: finding(`"severity":"urgent","file":"a","line":1,"title":"t","body":"b"`), wantErr: `findings[0].severity is "urgent"; want one of critical, high, medium, low, info`},
		{name: "file missing", text: finding(`"severity":"low","line":1,"title":"t","body":"b"`), wantErr: "findings[0].file is missing"},
		{name: "body missing", text: finding(`"severity":"low","file":"a","line":1,"title":"t"`), wantErr: "findings[0].body is missing"},
		{name: "title empty", text: finding(`"severity":"low","file":"a","line":1,"title":"","body":"b"`), wantErr: "findings[0].title is empty"},
		{name: "a file that forges a line", text: finding(`"severity":"low","file":"a.go\nstate: done\njob: task-x\u001b[31m","line":1,"title":"t","body":"b"`),
			wantErr: "findings[0].file holds a control character at byte 4"},
		{name: "a title with an escape", text: finding(`"severity":"low","file":"a.go","line":1,"title":"t\u001b]0;owned\u0007","body":"b"`),
			wantErr: "findings[0].title holds a control character at byte 1"},
		{name: "a title with a carriage return", text: finding(`"severity":"low","file":"a.go","line":1,"title":"ok\rforged","body":"b"`),
			wantErr: "findings[0].title holds a control character"},
		{name: "line null", text: finding(`"severity":"low","file":"a","line":null,"title":"t","body":"b"`), wantErr: "findings[0].line is null; want an integer"},
		{name: "line string", text: finding(`"severity":"low","file":"a","line":"3","title":"t","body":"b"`), wantErr: "findings[0].line is a string"},
		{name: "line negative", text: finding(`"severity":"low","file":"a","line":-1,"title":"t","body":"b"`), wantErr: `findings[0].line is "-1"`},
		{name: "line fraction", text: finding(`"severity":"low","file":"a","line":1.5,"title":"t","body":"b"`), wantErr: `findings[0].line is "1.5"`},
		{name: "line exponent", text: finding(`"severity":"low","file":"a","line":1e2,"title":"t","body":"b"`), wantErr: `findings[0].line is "1e2"`},
		{name: "line huge", text: finding(`"severity":"low","file":"a","line":99999999999999999999,"title":"t","body":"b"`), wantErr: "findings[0].line is"},
		{name: "line without a file", text: finding(`"severity":"low","file":"","line":4,"title":"t","body":"b"`), wantErr: "findings[0].line is 4 but findings[0].file is empty"},
		{name: "finding unknown member", text: finding(`"severity":"low","file":"a","line":1,"title":"t","body":"b","fix":"x"`), wantErr: "findings[0].fix is not a member of a finding"},
		{name: "finding repeated member", text: finding(`"severity":"low","file":"a","line":1,"line":2,"title":"t","body":"b"`), wantErr: "findings[0].line is repeated"},
		{name: "second finding", text: `{"verdict":"approve","summary":"x","findings":[{"severity":"low","file":"a","line":1,"title":"t","body":"b"},{"severity":"low","file":"a","line":1,"title":"t","body":false}]}`, wantErr: "findings[1].body is a boolean; want a string"},
		{name: "invalid UTF-8", text: "{\"verdict\":\"approve\",\"summary\":\"\xff\",\"findings\":[]}", wantErr: "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseVerdict(tt.text)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, failure.Unclassified, failure.KindOf(err))
				assert.Equal(t, failure.ExitError, failure.ExitCodeOf(err))
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func finding(members string) string {
	return `{"verdict":"request_changes","summary":"x","findings":[{` + members + `}]}`
}

// TestParseVerdictNeverQuotesTheReply: a message quotes a short excerpt of
// one value at most.
func TestParseVerdictNeverQuotesTheReply(t *testing.T) {
	long := strings.Repeat("SECRET-PROSE ", 1000)
	for _, text := range []string{
		long,
		long + `{"verdict":"` + long + `","summary":"x","findings":[]}`,
		`{"verdict":"approve","summary":"x","findings":[],"` + long + `":1}`,
	} {
		_, err := ParseVerdict(text)
		require.Error(t, err)
		assert.Less(t, len(err.Error()), 400, err.Error())
		assert.LessOrEqual(t, strings.Count(err.Error(), "SECRET-PROSE"), 4)
	}
}

// TestVerdictJSON: the members are exactly the contract's names, and
// findings is [] when empty.
func TestVerdictJSON(t *testing.T) {
	b, err := json.Marshal(validVerdict)
	require.NoError(t, err)
	back, err := ParseVerdict(string(b))
	require.NoError(t, err)
	assert.Equal(t, validVerdict, back)
	v, err := ParseVerdict(`{"verdict":"approve","summary":"x","findings":[]}`)
	require.NoError(t, err)
	b, err = json.Marshal(v)
	require.NoError(t, err)
	assert.JSONEq(t, `{"verdict":"approve","summary":"x","findings":[]}`, string(b))
}

func TestFirstObject(t *testing.T) {
	tests := []struct {
		text, want string
		ok         bool
	}{
		{"", "", false},
		{"no braces", "", false},
		{"{", "", false},
		{"}{", "", false},
		{"a {b} c {}", "{}", true},
		{`x {"a":{"b":1}} y`, `{"a":{"b":1}}`, true},
		{`{"a":"}"} {"b":2}`, `{"a":"}"}`, true},
		{`{"a":1,"a":2}`, `{"a":1,"a":2}`, true},
		{`{"a": {"b": 1}`, `{"b": 1}`, true},
		{"```json\n{\"k\": [1, 2]}\n```", `{"k": [1, 2]}`, true},
		{"{\"a\":\"\xff\"}", "{\"a\":\"\xff\"}", true},
	}
	for _, tt := range tests {
		got, ok := firstObject(tt.text)
		assert.Equal(t, tt.ok, ok, "%q", tt.text)
		assert.Equal(t, tt.want, got, "%q", tt.text)
	}
}

// TestFirstObjectBudget: prose full of unclosed objects is bounded work.
func TestFirstObjectBudget(t *testing.T) {
	text := strings.Repeat(`{"a":`, 100_000)
	_, ok := firstObject(text)
	assert.False(t, ok)
}

func FuzzFirstObject(f *testing.F) {
	for _, s := range []string{"", "{}", "a {b} {\"c\":1}", validObject, "```json\n" + validObject + "\n```", `{"a":"}{"`, "{{{{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		obj, ok := firstObject(text)
		if !ok {
			assert.Empty(t, obj)
			return
		}
		require.True(t, strings.HasPrefix(obj, "{") && strings.HasSuffix(obj, "}"), "%q", obj)
		i := strings.Index(text, obj)
		require.GreaterOrEqual(t, i, 0, "a substring of the text")
		_, earlier := firstObject(text[:i])
		require.False(t, earlier, "no complete object starts before it")
		again, ok := firstObject(obj)
		require.True(t, ok)
		assert.Equal(t, obj, again, "an object is its own first object")
	})
}

func FuzzParseVerdict(f *testing.F) {
	for _, s := range []string{validObject, "prose " + validObject + " prose", `{"verdict":"maybe","summary":"x","findings":[]}`,
		finding(`"severity":"low","file":"a","line":1,"title":"t","body":"b"`), "no json", `{"verdict":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		v, err := ParseVerdict(text)
		if err != nil {
			require.Equal(t, failure.Unclassified, failure.KindOf(err))
			require.Less(t, len(err.Error()), 600, "bounded message")
			require.True(t, utf8.ValidString(err.Error()), "a message is UTF-8")
			return
		}
		require.Contains(t, []string{VerdictApprove, VerdictRequestChanges}, v.Verdict)
		require.NotEmpty(t, strings.TrimSpace(v.Summary))
		require.NotNil(t, v.Findings)
		for _, f := range v.Findings {
			require.Contains(t, severities(), f.Severity)
			require.GreaterOrEqual(t, f.Line, 0)
			require.NotEmpty(t, strings.TrimSpace(f.Title))
			if f.File == "" {
				require.Zero(t, f.Line)
			}
		}
		// A valid verdict survives a round trip.
		b, err := json.Marshal(v)
		require.NoError(t, err)
		back, err := ParseVerdict(string(b))
		require.NoError(t, err)
		require.Equal(t, v, back)
	})
}

// TestSimulatorReviewReplies: the simulator's review replies parse as the
// command tests will expect.
func TestSimulatorReviewReplies(t *testing.T) {
	v, err := ParseVerdict(agentsim.ReviewVerdictJSON)
	require.NoError(t, err)
	assert.Equal(t, VerdictRequestChanges, v.Verdict)
	require.Len(t, v.Findings, 2)
	assert.Equal(t, Finding{Severity: SeverityMedium, File: "server/log.go", Line: 0, Title: "Secret in logs",
		Body: `The log line prints the "{token}" field; redact it.`}, v.Findings[1])

	v, err = ParseVerdict(agentsim.ReviewProseJSONText)
	require.NoError(t, err)
	assert.Equal(t, VerdictApprove, v.Verdict)
	assert.Equal(t, []Finding{{Severity: SeverityInfo, File: "README.md", Line: 3, Title: "Typo", Body: "'recieve' should be 'receive'."}}, v.Findings)

	_, err = ParseVerdict(agentsim.ReviewInvalidJSONText)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `verdict is "maybe"`)

	_, err = ParseVerdict(agentsim.ReviewNoJSONText)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "holds no JSON object")
}
