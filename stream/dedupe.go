package stream

import (
	"sort"
	"strings"
)

// textDedupe turns the assistant events of one turn into what the agent
// said, each piece once. The algorithm is described in the package
// documentation ("Deduplication"); the names below follow it.
//
// said is everything emitted so far, kept as the emitted strings themselves
// (a rope) rather than copied into one buffer: a turn can say hundreds of
// megabytes, and copying them is what the hot path must not do. Offsets are
// byte offsets into the concatenation. Three regions matter:
//
//	[runStart, len)    the open delta run: deltas no snapshot has confirmed yet
//	[flushStart, len)  the unflushed text: everything since the last flush
//	segs               the spans of the snapshots inside the unflushed text
//	calls              the same, by model_call_id
type textDedupe struct {
	said       rope
	runStart   int
	flushStart int
	segs       []span

	// Where the text of each model call since the last flush lies in said.
	calls map[string]span
}

// assistantKind is how an assistant event relates to text already seen.
type assistantKind int

const (
	// A delta (timestamp_ms, no model_call_id) carries only new text: it
	// exists only with --stream-partial-output.
	delta assistantKind = iota
	// A snapshot (model_call_id) is the complete text of one model call;
	// it may recap the deltas streamed for that call.
	snapshot
	// A flush (neither) is the copy Cursor prints at the end of a turn. It
	// may repeat text already sent, or be the only copy of new text.
	flush
)

func classify(a *Assistant) assistantKind {
	switch {
	case a.ModelCallID != "":
		return snapshot
	case a.HasTimestamp:
		return delta
	}
	return flush
}

// add records a and returns the text that is new, "" when there is none.
func (d *textDedupe) add(a *Assistant) string {
	switch classify(a) {
	case delta:
		return d.emit(a.Text)
	case snapshot:
		return d.snapshot(a.ModelCallID, a.Text)
	default:
		return d.flush(a.Text)
	}
}

func (d *textDedupe) emit(s string) string {
	d.said.append(s)
	return s
}

func (d *textDedupe) snapshot(call, text string) string {
	end := d.said.len()
	runLen := end - d.runStart
	prev, seen := d.calls[call]
	prevLen := prev.end - prev.start
	var fresh string
	switch {
	case runLen > 0 && d.said.hasSuffix(d.runStart, text):
		// The recap of the open delta run (or of its last part).
	case runLen > 0 && d.said.isPrefixOf(d.runStart, text):
		fresh = text[runLen:] // the recap carries more than the deltas did
	case seen && prev.end == end && d.said.isPrefixOf(prev.start, text):
		fresh = text[prevLen:] // the same model call, grown
	case seen && prevLen == len(text) && d.said.equal(prev.start, text):
		// The same model call replayed after other text: keep its old place.
		d.runStart = end
		return ""
	default:
		fresh = text
	}
	d.emit(fresh)
	// In every case above the snapshot's text is now the tail of said.
	end = d.said.len()
	s := span{end - len(text), end}
	if d.calls == nil {
		d.calls = map[string]span{}
	}
	d.calls[call] = s
	d.segs = append(d.segs, s)
	d.runStart = end
	return fresh
}

func (d *textDedupe) flush(text string) string {
	end := d.said.len()
	unflushed := end - d.flushStart
	var fresh string
	switch {
	case unflushed > 0 && d.said.hasSuffix(d.flushStart, text):
		// A replay of the end of the turn (the last segment, or all of it).
	case unflushed > 0 && d.isSegment(text):
		// A replay of one whole earlier segment.
	case unflushed > 0 && d.said.isPrefixOf(d.flushStart, text):
		fresh = text[unflushed:]
	case end > d.runStart && d.said.isPrefixOf(d.runStart, text):
		fresh = text[end-d.runStart:]
	default:
		fresh = text
	}
	d.emit(fresh)
	end = d.said.len()
	d.flushStart = end
	d.runStart = end
	d.segs = d.segs[:0]
	clear(d.calls)
	return fresh
}

func (d *textDedupe) isSegment(text string) bool {
	for _, s := range d.segs {
		if s.end-s.start == len(text) && d.said.equal(s.start, text) {
			return true
		}
	}
	return false
}

// rope is a string kept as the pieces it was appended in.
type rope struct {
	pieces []string
	starts []int // starts[i] is the offset of pieces[i]
	n      int
}

func (r *rope) append(s string) {
	if s == "" {
		return
	}
	r.pieces = append(r.pieces, s)
	r.starts = append(r.starts, r.n)
	r.n += len(s)
}

func (r *rope) len() int { return r.n }

// equal reports whether the len(s) bytes at offset off equal s.
func (r *rope) equal(off int, s string) bool {
	if off < 0 || off+len(s) > r.n {
		return false
	}
	if s == "" {
		return true
	}
	// The piece holding off: the last one starting at or before it.
	i := sort.Search(len(r.starts), func(k int) bool { return r.starts[k] > off }) - 1
	for s != "" {
		p := r.pieces[i][off-r.starts[i]:]
		k := min(len(p), len(s))
		if p[:k] != s[:k] {
			return false
		}
		s, off, i = s[k:], off+k, i+1
	}
	return true
}

// hasSuffix reports whether the text from offset from to the end ends with s.
func (r *rope) hasSuffix(from int, s string) bool {
	return len(s) <= r.n-from && r.equal(r.n-len(s), s)
}

// isPrefixOf reports whether the text from offset from to the end is a
// prefix of s.
func (r *rope) isPrefixOf(from int, s string) bool {
	n := r.n - from
	return n <= len(s) && r.equal(from, s[:n])
}

// String returns the whole text.
func (r *rope) String() string { return strings.Join(r.pieces, "") }
