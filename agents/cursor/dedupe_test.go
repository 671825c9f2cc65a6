package cursor

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/event"
)

// texts feeds lines after init and returns the text events of a Decoder
// that keeps its text. The same lines fed to a Decoder whose rope forgets
// all but a few bytes must give the same events: what dedupe compares with
// forgotten text it compares by hash.
func texts(t *testing.T, lines []string) ([]string, *decoder) {
	t.Helper()
	feed := func(d *decoder) []string {
		_, err := d.Feed([]byte(initLine))
		require.NoError(t, err)
		var got []string
		for _, l := range lines {
			evs, err := d.Feed([]byte(l))
			require.NoError(t, err)
			for _, ev := range evs {
				if ev.Type == event.TypeText {
					got = append(got, ev.Text)
				}
			}
		}
		return got
	}
	d := newDecoder(t, Turn{})
	d.keepText()
	got := feed(d)
	forgetful := newDecoder(t, Turn{})
	forgetful.setTextWindow(3)
	require.Equal(t, got, feed(forgetful), "a rope that forgets")
	require.Equal(t, len(strings.Join(got, "")), forgetful.saidLen())
	require.Empty(t, forgetful.saidText(), "saidText needs keepText")
	return got, d
}

func TestDedupe(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"one snapshot", seq(snap("m1", "Hello")), []string{"Hello"}},
		{"one flush (older builds)", seq(flushLine("Hello")), []string{"Hello"}},
		{"text before a tool call, repeated without model_call_id at the end",
			seq(snap("m1", "Let me read it."), toolPair("t1"), flushLine("Let me read it.")),
			[]string{"Let me read it."}},
		{"two model calls, the last repeated by the flush",
			seq(snap("m1", "Reading."), toolPair("t1"), snap("m2", "Done."), flushLine("Done.")),
			[]string{"Reading.", "Done."}},
		{"the flush repeats the whole turn",
			seq(snap("m1", "A. "), toolPair("t1"), snap("m2", "B."), flushLine("A. B.")),
			[]string{"A. ", "B."}},
		{"the flush repeats one earlier model call",
			seq(snap("m1", "A."), toolPair("t1"), snap("m2", "B."), flushLine("A.")),
			[]string{"A.", "B."}},
		{"the flush extends the turn",
			seq(snap("m1", "A."), flushLine("A. And B.")),
			[]string{"A.", " And B."}},
		{"partial output: deltas then the recap",
			seq(deltaLine("Hel"), deltaLine("lo"), snap("m1", "Hello")),
			[]string{"Hel", "lo"}},
		{"partial output: a recap that carries more than the deltas",
			seq(deltaLine("Hel"), snap("m1", "Hello")),
			[]string{"Hel", "lo"}},
		{"partial output: deltas closed by a flush only",
			seq(deltaLine("Hel"), deltaLine("lo"), flushLine("Hello")),
			[]string{"Hel", "lo"}},
		{"partial output: two segments, recaps, and the whole turn again",
			seq(deltaLine("Let me "), deltaLine("look."), snap("m1", "Let me look."), toolPair("t1"),
				deltaLine("Found "), deltaLine("it."), snap("m2", "Found it."), flushLine("Let me look.Found it.")),
			[]string{"Let me ", "look.", "Found ", "it."}},
		{"partial output: segments without recaps, the flush repeats the last",
			seq(deltaLine("ha"), toolPair("t1"), deltaLine("ha"), flushLine("ha")),
			[]string{"ha", "ha"}},
		{"partial output: the recap arrives after the tool call started",
			seq(deltaLine("Let me "), deltaLine("look."), toolPair("t1")[0], snap("m1", "Let me look."), toolPair("t1")[1],
				deltaLine("Done."), flushLine("Done.")),
			[]string{"Let me ", "look.", "Done."}},
		{"identical deltas are both text", seq(deltaLine("ha"), deltaLine("ha")), []string{"ha", "ha"}},
		{"identical sentences from two model calls are both said",
			seq(snap("m1", "Checking."), toolPair("t1"), snap("m2", "Checking."), toolPair("t2"), snap("m3", "Done."), flushLine("Done.")),
			[]string{"Checking.", "Checking.", "Done."}},
		{"identical flushes one after another are both said (one per message)",
			seq(flushLine("Checking."), toolPair("t1"), flushLine("Checking.")),
			[]string{"Checking.", "Checking."}},
		{"the same model call replayed", seq(snap("m1", "A"), snap("m1", "A")), []string{"A"}},
		{"the same model call grown", seq(snap("m1", "A"), snap("m1", "AB")), []string{"A", "B"}},
		{"the same model call replayed after another",
			seq(snap("m1", "A"), snap("m2", "B"), snap("m1", "A")), []string{"A", "B"}},
		{"a recap unrelated to the deltas is new text",
			seq(deltaLine("abc"), snap("m1", "xyz")), []string{"abc", "xyz"}},
		{"empty texts say nothing", seq(snap("m1", ""), flushLine(""), deltaLine("")), nil},
		{"the documented ambiguity: a flush equal to the end of the unflushed text is a replay",
			seq(snap("m1", "I checked. Done.")), []string{"I checked. Done."}},
		{"after a flush, a new flush is compared with nothing",
			seq(snap("m1", "A"), flushLine("A"), flushLine("A")), []string{"A", "A"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, d := texts(t, tt.lines)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, strings.Join(tt.want, ""), d.saidText())
		})
	}
}

func TestDedupeAmbiguityStated(t *testing.T) {
	// The package documentation names one ambiguity: a flush that is new
	// text but equals the end of the unflushed text is taken for a replay.
	got, _ := texts(t, seq(snap("m1", "I checked. Done."), toolPair("t1"), flushLine("Done.")))
	assert.Equal(t, []string{"I checked. Done."}, got)
}

func TestResultTextWhenNoAssistantText(t *testing.T) {
	got, d := texts(t, seq(`{"type":"result","subtype":"success","is_error":false,"result":"only here","session_id":"abc"}`))
	assert.Equal(t, []string{"only here"}, got)
	assert.Equal(t, "only here", d.saidText())

	got, d = texts(t, seq(snap("m1", "said"), `{"type":"result","subtype":"success","result":"said"}`))
	assert.Equal(t, []string{"said"}, got, "the result does not repeat streamed text")
	assert.Equal(t, "said", d.saidText())

	got, _ = texts(t, seq(errorResult("You've hit your usage limit")))
	assert.Empty(t, got, "an error result's text is its message, not an answer")
}

// TestDedupeNewTextIsCopied checks that the new end of a recap does not
// hold the whole recap in memory.
func TestDedupeNewTextIsCopied(t *testing.T) {
	d := newDecoder(t, Turn{})
	feedAll(t, d, seq(initLine, deltaLine("Hel")))
	evs, err := d.Feed([]byte(snap("m1", "Hello"+strings.Repeat("!", 1000))))
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, "lo"+strings.Repeat("!", 1000), evs[0].Text)
}

func TestRope(t *testing.T) {
	var r rope
	for _, p := range []string{"ab", "", "cde", "f"} {
		r.append(p)
	}
	assert.Equal(t, "abcdef", r.String())
	assert.Equal(t, 6, r.len())
	for off := 0; off <= 6; off++ {
		for n := 0; off+n <= 6; n++ {
			assert.True(t, r.equal(off, "abcdef"[off:off+n]), "equal(%d, %q)", off, "abcdef"[off:off+n])
		}
	}
	assert.False(t, r.equal(1, "bd"))
	assert.False(t, r.equal(5, "fg"))
	assert.False(t, r.equal(-1, "a"))
	assert.True(t, r.hasSuffix(0, "ef"))
	assert.True(t, r.hasSuffix(4, "ef"))
	assert.False(t, r.hasSuffix(5, "ef"))
	assert.True(t, r.isPrefixOf(2, "cdefgh"))
	assert.False(t, r.isPrefixOf(2, "cdf"))
	assert.False(t, r.isPrefixOf(0, "abc"))
}

// TestRopeForgets checks a rope with a window: it keeps the last bytes,
// compares forgotten text by region hash from the start of the text or an
// anchor (a mark), and reports a difference when a comparison starts or
// ends inside a forgotten region, a piece's start included.
func TestRopeForgets(t *testing.T) {
	r := rope{window: 4}
	pieces := []string{"abc", "def", "gh", "ijkl", "mnop", "qr"}
	for i, p := range pieces {
		r.append(p)
		switch i {
		case 0:
			r.mark(3) // the end of "abc", as a snapshot's end is marked
		case 1:
			r.mark(4) // inside "def"
		case 2:
			r.mark(8) // the end of "gh"
		}
	}
	text := strings.Join(pieces, "")
	require.Equal(t, len(text), r.len())
	require.Greater(t, r.base(), 8, "the rope forgot its first pieces")
	require.LessOrEqual(t, r.base(), r.len()-r.window)
	assert.Len(t, r.pieces, 2, "the pieces that hold the last 4 bytes")
	assert.Len(t, r.gone, 4, "one region per anchor: 0, 3, 4, 8")

	tests := []struct {
		off  int
		s    string
		want bool
	}{
		{0, text, true},
		{0, "abc", true}, // up to an anchor
		{0, "abd", false},
		{3, text[3:], true},
		{3, "dxfgh" + text[8:], false},
		{8, text[8:], true},
		{3, "d", true},
		{4, "ef", false},     // ends inside a forgotten region
		{4, text[4:], true},  // from a mark
		{1, text[1:], false}, // starts inside a forgotten region
		{0, "ab", false},     // ends inside a forgotten region
		{6, text[6:], false}, // a piece's start is no anchor
		{r.base(), text[r.base():], true},
		{len(text) - 1, "r", true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, r.equal(tt.off, tt.s), "equal(%d, %q)", tt.off, tt.s)
	}
	assert.True(t, r.hasSuffix(0, text[8:]), "a suffix from an anchor")
	assert.False(t, r.hasSuffix(0, text[6:]), "a suffix from a forgotten piece's start")
	assert.True(t, r.isPrefixOf(3, text[3:]+"more"))
	assert.False(t, r.isPrefixOf(3, "x"+text[4:]+"more"))

	r.forgetBefore(8)
	assert.False(t, r.equal(0, text), "forgotten before the flush")
	assert.True(t, r.equal(8, text[8:]))
	assert.Len(t, r.gone, 1)
}

// TestRopeRegionsStayFew: forgetting many pieces without anchors keeps one
// hash, not one per piece.
func TestRopeRegionsStayFew(t *testing.T) {
	r := rope{window: 1 << 10}
	for range 10000 {
		r.append("0123456789")
	}
	assert.Len(t, r.gone, 1)
	assert.True(t, r.equal(0, strings.Repeat("0123456789", 10000)))
}

// TestDecoderForgetsText checks that a Decoder keeps a window of what the
// agent said, not the whole turn, and still drops a final copy of all of
// it.
func TestDecoderForgetsText(t *testing.T) {
	d := newDecoder(t, Turn{})
	_, err := d.Feed([]byte(initLine))
	require.NoError(t, err)
	piece := strings.Repeat("x", 64<<10-1) + "\n"
	var all strings.Builder
	for i := 0; all.Len() < 3*defaultWindow; i++ {
		p := strconv.Itoa(i) + piece
		all.WriteString(p)
		evs, err := d.Feed([]byte(deltaLine(p)))
		require.NoError(t, err)
		require.Len(t, evs, 1)
		assert.Equal(t, p, evs[0].Text)
		said := &d.text.said
		kept := 0
		for _, pc := range said.pieces {
			kept += len(pc.s)
		}
		require.Less(t, kept, defaultWindow+defaultWindow/2+len(p), "kept only a window and a half")
		require.Equal(t, said.len()-said.base(), kept)
	}
	assert.Equal(t, all.Len(), d.saidLen())
	assert.Empty(t, d.saidText())
	evs, err := d.Feed([]byte(flushLine(all.String())))
	require.NoError(t, err)
	assert.Empty(t, evs, "the final copy of the whole turn is a replay")
}
