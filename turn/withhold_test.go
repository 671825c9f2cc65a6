package turn

import (
	"encoding/json/v2"
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestWithholdFindsThePromptHoweverSpelled(t *testing.T) {
	const prompt = "Refactor the Payment module, keep the tests green 🚀"
	tests := []struct {
		name string
		text string
		want bool
	}{
		{"verbatim", `{"type":"user","text":"Refactor the Payment module, keep the tests green 🚀"}`, true},
		{"JSON escapes", `{"t":"` + testkit.EscapeAll(prompt) + `"}`, true},
		{"escaped type and text", `{"type":"us\u0065r","text":"` + testkit.EscapeAll("the Payment module") + `"}`, true},
		{"upper case", strings.ToUpper(prompt), true},
		{"mixed case and reflowed", "refactor THE payment\n  Module, keep", true},
		{"a cut echo", `"…ment module, kee…"`, true},
		{"twice escaped", jsonString(jsonString(testkit.EscapeAll(prompt))), true},
		{"Go quoting", fmt.Sprintf("%q", "x\x01"+prompt), true},
		{"Kelvin sign and long s", "\u212Aeep the te\u017Fts", true},
		{"another text", `{"type":"assistant","text":"Done: all tests pass."}`, false},
		{"a few of its words", "the tests, the module", false},
		{"empty", "", false},
	}
	w := newWithhold(prompt)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, w.holdsString(tt.text))
		})
	}
}

// TestWithholdCaseOutsideTheOrbit: the dotless ı upper-cases to I and the
// dotted İ lower-cases to i, outside their case-folding orbits; a prompt
// echoed in either case is still found.
func TestWithholdCaseOutsideTheOrbit(t *testing.T) {
	for _, prompt := range []string{"Kırmızı elma ağacı büyüdü", "İstanbul'da İzmir'e gittik"} {
		w := newWithhold(prompt)
		assert.True(t, w.holdsString(strings.ToUpper(prompt)), "%s upper-cased", prompt)
		assert.True(t, w.holdsString(strings.ToLower(prompt)), "%s lower-cased", prompt)
		assert.True(t, w.holdsString(testkit.EscapeAll(strings.ToUpper(prompt))), "%s upper-cased and escaped", prompt)
	}
}

func TestWithholdShortAndEmptyPrompts(t *testing.T) {
	assert.True(t, newWithhold("fix it").holdsString(`"FIX\u0020it"`), "a prompt shorter than a window is found whole")
	assert.False(t, newWithhold("fix it").holdsString("fix the bug"))
	assert.False(t, newWithhold("").holdsString("anything"), "an empty prompt is never found")
	assert.False(t, newWithhold("?!").holdsString("?!"), "a prompt without letters or digits is never found")
	assert.False(t, withhold{}.holdsString("anything"))
}

func TestWithholdErrorAndEvents(t *testing.T) {
	const prompt = "Summarize the quarterly revenue report"
	w := newWithhold(prompt)

	err := w.error(&failure.Error{Kind: failure.Protocol, Message: "protocol violation at line 3", Detail: `excerpt: "summarize the QUARTERLY revenue"`})
	var fe *failure.Error
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, failure.Protocol, fe.Kind, "the kind stays")
	assert.Equal(t, "protocol violation at line 3", fe.Message, "what holds nothing of the prompt stays")
	assert.Equal(t, withheld, fe.Detail)

	err = w.error(&failure.Error{Kind: failure.Policy, Message: "tool \"Summarize the quarterly revenue\" is not allowed"})
	assert.NotContains(t, strings.ToLower(err.Error()), "quarterly")
	assert.Equal(t, failure.Policy, failure.KindOf(err))

	plain := fmt.Errorf("exit: %s", prompt)
	assert.NotContains(t, w.error(plain).Error(), "quarterly")
	assert.Nil(t, w.error(nil))

	tests := []struct {
		name string
		in   event.Event
		held func(event.Event) string
	}{
		{"warning", event.Event{Type: event.TypeWarning, Warning: &event.Warning{Code: "api_error", Message: prompt}},
			func(e event.Event) string { return e.Warning.Message }},
		{"unknown", event.Event{Type: event.TypeUnknown, Unknown: &event.Unknown{Type: "user_echo", Raw: []byte(`{"m":"` + testkit.EscapeAll(prompt) + `"}`)}},
			func(e event.Event) string { return string(e.Unknown.Raw) + e.Unknown.Type }},
		{"unknown's type", event.Event{Type: event.TypeUnknown, Unknown: &event.Unknown{Type: prompt, Raw: []byte(`{"type":` + jsonString(prompt) + `}`)}},
			func(e event.Event) string { return string(e.Unknown.Raw) + e.Unknown.Type }},
		{"error result", event.Event{Type: event.TypeResult, Result: &event.Result{IsError: true, Text: "bad request: " + prompt}},
			func(e event.Event) string { return e.Result.Text }},
		{"init", event.Event{Type: event.TypeInit, Init: &event.Init{SessionID: prompt, Model: "m"}},
			func(e event.Event) string { return e.Init.SessionID + e.Init.Model }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.held(tt.in)
			out := w.event(tt.in)
			assert.NotContains(t, strings.ToLower(tt.held(out)), "quarterly")
			assert.Equal(t, before, tt.held(tt.in), "the caller's event is not changed")
		})
	}

	text := event.Event{Type: event.TypeText, Text: "You asked: " + prompt}
	assert.Equal(t, text, w.event(text), "the model's words are the turn itself")
	okResult := event.Event{Type: event.TypeResult, Result: &event.Result{Text: prompt}}
	assert.Equal(t, okResult, w.event(okResult), "a successful result's text is the answer")
}

func FuzzWithholdSpellings(f *testing.F) {
	f.Add("Refactor the payment module", uint8(0), "prefix ", " suffix")
	f.Add("ünïcödé prompt with 🚀 inside it", uint8(1), `{"a":"`, `"}`)
	f.Add("short", uint8(2), "", "")
	f.Fuzz(func(t *testing.T, core string, spelling uint8, before, after string) {
		// Ends no fixed text of ours holds; an agent's JSON holds valid UTF-8.
		prompt := "Qz7" + strings.ToValidUTF8(core, "") + "Xk9"
		var spelled string
		switch spelling % 5 {
		case 0:
			spelled = jsonString(prompt)
		case 1:
			spelled = testkit.EscapeAll(prompt)
		case 2:
			spelled = jsonString(strings.ToUpper(prompt))
		case 3:
			spelled = jsonString(jsonString(prompt))
		default:
			spelled = fmt.Sprintf("%q", prompt)
		}
		if !newWithhold(prompt).holdsString(before + spelled + after) {
			t.Fatalf("the prompt %q spelled %q was not found", prompt, spelled)
		}
	})
}

// TestFoldASCII: fold's own answer for an ASCII rune is foldRune's.
func TestFoldASCII(t *testing.T) {
	for r := range rune(128) {
		f, ok := fold(r)
		wf, wok := foldRune(r)
		require.Equal(t, wok, ok, "%q", r)
		if ok {
			require.Equal(t, wf, f, "%q", r)
		}
	}
	f, ok := fold('K') // the Kelvin sign, outside the table
	require.True(t, ok)
	require.Equal(t, 'K', f)
}

// TestFoldIsOneRunePerLetter: every case of a letter folds to one rune,
// for every rune of the tables: a rune's upper case, lower case and
// case-folding orbit fold as it does.
func TestFoldIsOneRunePerLetter(t *testing.T) {
	for r := range rune(unicode.MaxRune + 1) {
		f, ok := fold(r)
		if !ok {
			continue
		}
		for _, other := range []rune{unicode.ToUpper(r), unicode.ToLower(r), unicode.SimpleFold(r)} {
			if of, ok := fold(other); ok && of != f {
				t.Fatalf("%U folds to %U, its case %U to %U", r, f, other, of)
			}
		}
	}
}
