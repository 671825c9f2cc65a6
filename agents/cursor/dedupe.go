package cursor

import (
	"hash/maphash"
	"slices"
	"sort"
	"strings"
)

// textDedupe turns the assistant events of one turn into what the agent
// said, each piece once (docs/contract.md, "Stream"). An assistant event
// is one of three kinds:
//
//   - delta (timestamp_ms without model_call_id): always new, emitted whole
//     and never compared, so "ha" then "ha" is "haha". The deltas since the
//     last snapshot or flush are the open run.
//   - snapshot (model_call_id): one model call's whole text. It adds nothing
//     when the open run ends with it (a recap), only the rest when it starts
//     with the open run; failing that, a call seen since the last flush adds
//     nothing when it repeats its text, only the extension when it grew with
//     nothing said since; else it is new, whole (two model calls that both
//     say "Checking." are both new). It closes the open run.
//   - flush (neither): the end-of-turn copy. It adds nothing when the
//     unflushed text (everything since the previous flush) ends with it or
//     one of its snapshots equals it, only the rest when it starts with the
//     unflushed text or the open run; else it is new, whole. It starts a new
//     unflushed region, so consecutive flushes (older builds print one per
//     message) are always new.
//
// Text is dropped only as a copy of unconfirmed text or of the same model
// call. The one ambiguity: a new flush that equals the end of the
// unflushed text, or one of its snapshots, is taken for a replay.
//
// said is everything emitted so far; offsets are byte offsets into it:
//
//	[runStart, len)    the open delta run
//	[flushStart, len)  the unflushed text
//	segs               the spans of the snapshots inside the unflushed text
//	calls              the same, by model_call_id
type textDedupe struct {
	said       rope
	runStart   int
	flushStart int
	segs       []span
	calls      map[string]span
}

// span is where a piece of text lies in said: [start, end).
type span struct{ start, end int }

// add records an assistant event's text and returns the text that is new,
// "" when there is none.
func (d *textDedupe) add(modelCallID string, hasTimestamp bool, text string) string {
	switch {
	case modelCallID != "":
		return d.snapshot(modelCallID, text)
	case hasTimestamp:
		return d.emit(text) // a delta
	}
	return d.flush(text)
}

// emit records s as said and returns it.
func (d *textDedupe) emit(s string) string {
	d.said.append(s)
	return s
}

// emitTail emits text[n:], the part of text that is new, as a copy: the
// rope and the event then hold only the new text, not the whole of text.
func (d *textDedupe) emitTail(text string, n int) string {
	if n == 0 {
		return d.emit(text)
	}
	return d.emit(strings.Clone(text[n:]))
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
		fresh = d.emitTail(text, runLen) // the recap carries more than the deltas did
	case seen && prev.end == end && d.said.isPrefixOf(prev.start, text):
		fresh = d.emitTail(text, prevLen) // the same model call, grown
	case seen && prevLen == len(text) && d.said.equal(prev.start, text):
		// The same model call replayed after other text: keep its old place.
		d.runStart = end
		d.said.mark(end)
		return ""
	default:
		fresh = d.emit(text)
	}
	// In every case above the snapshot's text is now the tail of said.
	end = d.said.len()
	s := span{end - len(text), end}
	d.said.mark(s.start)
	d.said.mark(end)
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
		fresh = d.emitTail(text, unflushed)
	case end > d.runStart && d.said.isPrefixOf(d.runStart, text):
		fresh = d.emitTail(text, end-d.runStart)
	default:
		fresh = d.emit(text)
	}
	end = d.said.len()
	d.flushStart = end
	d.runStart = end
	d.said.mark(end)
	d.segs = d.segs[:0]
	clear(d.calls)
	// Every later comparison starts at or after the flush.
	d.said.forgetBefore(end)
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

// defaultWindow is how much of the latest text a rope keeps at least.
const defaultWindow = 1 << 20

// rope is what the agent said: the pieces emitted, in order. A piece is
// the string the decoder put in a text event; the rope holds it, it does
// not copy it.
//
// With a window, the rope forgets the oldest pieces while the others
// still hold the last window bytes (it keeps at most one and a half
// windows and a piece), so a turn of hundreds of megabytes holds about a
// megabyte. What it forgets it keeps as one hash per region, a region
// running from one anchor to the next: an anchor is an offset dedupe
// compares from (the start of the text, and every offset mark was given:
// the start and end of each snapshot, the end of each flush, the end of
// the text at each tool call). Comparing forgotten text hashes the other
// side: equal hashes (64-bit, seeded per rope) count as equal text. A
// comparison that starts or ends inside a forgotten region (a recap of the
// end of a long delta run that starts in its middle) cannot be made and
// reports a difference: dedupe then emits the text again rather than drop
// any. The regions are as many as the anchors since the last flush,
// whatever the number of pieces.
type rope struct {
	pieces []piece // the kept pieces, oldest first
	n      int     // the length of everything said, kept or forgotten

	window  int   // 0: keep everything
	anchors []int // anchors not forgotten yet, ascending
	gone    []goneBlock
	// The last gone region is open while hashing holds its state: the
	// next forgotten bytes extend it until an anchor closes it.
	hash    maphash.Hash
	hashing bool
	seed    maphash.Seed
	seeded  bool
}

// piece is one emitted string and its offset.
type piece struct {
	start int
	s     string
}

// goneBlock is a forgotten region: [start, next region's start or the
// first kept piece's start), by hash.
type goneBlock struct {
	start int
	hash  uint64
}

// append adds s.
func (r *rope) append(s string) {
	if s == "" {
		return
	}
	r.pieces = append(r.pieces, piece{r.n, s})
	r.n += len(s)
	if r.window > 0 {
		r.forget()
	}
}

// mark makes off an anchor, so text compared from there (or up to there)
// can still be compared once forgotten. An offset already forgotten
// cannot become one.
func (r *rope) mark(off int) {
	if r.window == 0 || off < r.base() {
		return
	}
	if last := len(r.anchors) - 1; last < 0 || r.anchors[last] < off {
		r.anchors = append(r.anchors, off)
		return
	}
	i, found := slices.BinarySearch(r.anchors, off)
	if !found {
		r.anchors = slices.Insert(r.anchors, i, off)
	}
}

// base is the offset of the first byte still kept.
func (r *rope) base() int {
	if len(r.pieces) == 0 {
		return r.n
	}
	return r.pieces[0].start
}

// forget drops the oldest pieces while the rest still hold the last
// window bytes, hashing them into regions. It waits until half a window
// more is kept, so that dropping (which moves the kept pieces) is paid
// once per half window, not once per piece.
func (r *rope) forget() {
	if r.n-r.base() < r.window+r.window/2 {
		return
	}
	drop := 0
	for drop+1 < len(r.pieces) && r.n-r.pieces[drop+1].start >= r.window {
		drop++
	}
	if drop == 0 {
		return
	}
	if !r.seeded {
		r.seed, r.seeded = maphash.MakeSeed(), true
		r.hash.SetSeed(r.seed)
	}
	a := 0 // the next anchor to meet
	for _, p := range r.pieces[:drop] {
		at := p.start
		for ; a < len(r.anchors) && r.anchors[a] < p.start+len(p.s); a++ {
			if r.anchors[a] < at {
				continue // before this piece: already a region start
			}
			r.extend(at, p.s[at-p.start:r.anchors[a]-p.start])
			r.open(r.anchors[a])
			at = r.anchors[a]
		}
		r.extend(at, p.s[at-p.start:])
	}
	r.gone[len(r.gone)-1].hash = r.hash.Sum64() // the open region, so far
	r.anchors = r.anchors[a:]
	// Move the kept pieces to the front, in place: the array is reused
	// from one forget to the next, and the forgotten strings are let go.
	n := copy(r.pieces, r.pieces[drop:])
	clear(r.pieces[n:])
	r.pieces = r.pieces[:n]
}

// open closes the open region, if any, and opens one at start.
func (r *rope) open(start int) {
	if r.hashing {
		r.gone[len(r.gone)-1].hash = r.hash.Sum64()
	}
	r.hash.Reset()
	r.gone = append(r.gone, goneBlock{start: start})
	r.hashing = true
}

// extend adds the forgotten text s, which starts at offset at, to the
// open region (opening one at at when none is).
func (r *rope) extend(at int, s string) {
	if !r.hashing {
		r.open(at)
	}
	r.hash.WriteString(s)
}

// forgetBefore lets the rope drop what it knows of the text before off:
// no comparison will start there again.
func (r *rope) forgetBefore(off int) {
	i := sort.Search(len(r.gone), func(k int) bool { return r.gone[k].start >= off })
	if i == 0 {
		return
	}
	if i == len(r.gone) {
		r.hashing = false // the open region goes too
	}
	r.gone = append(r.gone[:0], r.gone[i:]...)
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
	if base := r.base(); off < base {
		i := sort.Search(len(r.gone), func(k int) bool { return r.gone[k].start >= off })
		if i == len(r.gone) || r.gone[i].start != off {
			return false // starts inside a forgotten block
		}
		for ; off < base && s != ""; i++ {
			stop := base
			if i+1 < len(r.gone) {
				stop = r.gone[i+1].start
			}
			if stop-off > len(s) {
				return false // ends inside a forgotten block
			}
			if maphash.String(r.seed, s[:stop-off]) != r.gone[i].hash {
				return false
			}
			s, off = s[stop-off:], stop
		}
		if s == "" {
			return true
		}
	}
	// The piece holding off: the last one starting at or before it.
	i := sort.Search(len(r.pieces), func(k int) bool { return r.pieces[k].start > off }) - 1
	for s != "" {
		p := r.pieces[i].s[off-r.pieces[i].start:]
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
