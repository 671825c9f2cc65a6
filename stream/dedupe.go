package stream

import (
	"hash/maphash"
	"slices"
	"sort"
	"strings"
	"unsafe"
)

// textDedupe turns the assistant events of one turn into what the agent
// said, each piece once. The algorithm is described in the package
// documentation ("Deduplication"); the names below follow it.
//
// said is everything emitted so far, copied into append-only slabs (a
// rope): the strings Turn outputs are views of those copies, so the text
// of an event is copied once, from the line into said, and a turn of
// hundreds of megabytes allocates a few hundred slabs rather than a string
// per event. Offsets are byte offsets into the concatenation. Three
// regions matter:
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

// emit records s as said and returns the stored copy, which stays valid
// after the line s may be a view of is reused.
func (d *textDedupe) emit(s string) string { return d.said.append(s) }

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
		d.said.mark(end)
		return ""
	default:
		fresh = text
	}
	fresh = d.emit(fresh)
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
		fresh = text[unflushed:]
	case end > d.runStart && d.said.isPrefixOf(d.runStart, text):
		fresh = text[end-d.runStart:]
	default:
		fresh = text
	}
	fresh = d.emit(fresh)
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

// slabSize is the size of the buffers said is copied into: large enough
// that a turn of many small pieces allocates rarely, small enough that the
// unused end of the last one does not matter.
const slabSize = 1 << 20

// defaultWindow is how much of the latest text a rope keeps at least.
// Dedupe compares text from the start of a piece or of a snapshot, which
// the rope can still do by hash once the text is forgotten, except for a
// recap of the end of the text that starts inside a piece (see rope).
const defaultWindow = 4 << 20

// rope is what the agent said, kept in append-only slabs. Appending copies
// the piece into the current slab, or a new one when it does not fit, and
// returns a string viewing that copy: a slab's bytes never change once
// written, so such strings stay valid (and keep their slab alive) however
// long the caller holds them, unless reuse is set. A piece never spans two
// slabs. Slabs start small and double up to slabSize, so that a short
// turn stays small.
//
// With a window, the rope forgets slabs that lie wholly before the last
// window bytes, so a turn of hundreds of megabytes keeps a few: what it
// forgets it keeps as one hash per block, a block being the text between
// two cuts (the start of every piece, and every offset mark was given).
// Comparing a forgotten block hashes the other side: equal hashes (64-bit,
// seeded per rope) count as equal text. A comparison that starts or ends
// inside a forgotten block cannot be made and reports a difference: dedupe
// then emits the text again rather than drop any.
//
// With reuse, forgotten slabs are written again: the strings append
// returned from them change. A turn of any length then runs in the same
// few slabs, with no garbage to collect.
type rope struct {
	slabs  [][]byte
	starts []int // starts[i] is the offset of slabs[i]
	n      int
	reuse  bool
	free   [][]byte // forgotten slabs of slabSize, with reuse

	window int   // 0: keep everything
	slab   int   // the slab size; slabSize when 0 (tests use small ones)
	cuts   []int // block starts inside the kept slabs, ascending
	gone   []goneBlock
	seed   maphash.Seed
	seeded bool
}

// goneBlock is a forgotten block: [start, next block's start or the first
// kept slab's start), by hash.
type goneBlock struct {
	start int
	hash  uint64
}

// append adds s and returns the stored copy of it.
func (r *rope) append(s string) string {
	if s == "" {
		return ""
	}
	k := len(r.slabs) - 1
	if k < 0 || cap(r.slabs[k])-len(r.slabs[k]) < len(s) {
		if r.window > 0 {
			r.forget()
		}
		r.slabs = append(r.slabs, r.newSlab(len(s)))
		r.starts = append(r.starts, r.n)
		k = len(r.slabs) - 1
	}
	r.mark(r.n)
	at := len(r.slabs[k])
	r.slabs[k] = append(r.slabs[k], s...)
	r.n += len(s)
	return unsafe.String(&r.slabs[k][at], len(s))
}

// newSlab returns an empty slab with room for n bytes at least.
func (r *rope) newSlab(n int) []byte {
	limit := r.slab
	if limit == 0 {
		limit = slabSize
	}
	if k := len(r.free) - 1; k >= 0 && cap(r.free[k]) >= n {
		b := r.free[k]
		r.free[k] = nil
		r.free = r.free[:k]
		return b
	}
	size := min(4<<10, limit)
	if k := len(r.slabs) - 1; k >= 0 {
		size = min(2*cap(r.slabs[k]), limit)
	}
	return make([]byte, 0, max(size, n))
}

// mark makes off the start of a block, so text compared from there (or
// up to there) can still be compared once forgotten. Every piece's start
// is marked; dedupe marks the other offsets it keeps: the start of each
// snapshot (which may lie inside a piece) and its end.
func (r *rope) mark(off int) {
	if r.window == 0 || off < r.base() {
		return
	}
	if last := len(r.cuts) - 1; last < 0 || r.cuts[last] < off {
		r.cuts = append(r.cuts, off) // the usual case: a new piece
		return
	}
	i, found := slices.BinarySearch(r.cuts, off)
	if !found {
		r.cuts = slices.Insert(r.cuts, i, off)
	}
}

// base is the offset of the first byte still kept.
func (r *rope) base() int {
	if len(r.starts) == 0 {
		return r.n
	}
	return r.starts[0]
}

// forget drops the oldest slabs while the rest still hold the last window
// bytes, hashing their blocks.
func (r *rope) forget() {
	if !r.seeded {
		r.seed, r.seeded = maphash.MakeSeed(), true
	}
	drop := 0
	for drop+1 < len(r.slabs) && r.n-r.starts[drop+1] >= r.window {
		drop++
	}
	if drop == 0 {
		return
	}
	end := r.starts[drop]
	cut := 0
	for ; cut < len(r.cuts) && r.cuts[cut] < end; cut++ {
		start := r.cuts[cut]
		stop := end
		if cut+1 < len(r.cuts) && r.cuts[cut+1] < end {
			stop = r.cuts[cut+1]
		}
		r.gone = append(r.gone, goneBlock{start: start, hash: r.hashOf(start, stop)})
	}
	r.cuts = append(r.cuts[:0], r.cuts[cut:]...)
	if len(r.cuts) == 0 || r.cuts[0] != end {
		// The first kept slab starts a piece, hence a block.
		r.cuts = slices.Insert(r.cuts, 0, end)
	}
	limit := r.slab
	if limit == 0 {
		limit = slabSize
	}
	for i, b := range r.slabs[:drop] {
		if r.reuse && cap(b) == limit {
			r.free = append(r.free, b[:0])
		}
		r.slabs[i] = nil
	}
	r.slabs = append(r.slabs[:0], r.slabs[drop:]...)
	r.starts = append(r.starts[:0], r.starts[drop:]...)
}

// hashOf hashes the kept bytes [start, stop): one block, which lies in
// one slab (every slab starts a piece, hence a block).
func (r *rope) hashOf(start, stop int) uint64 {
	i := sort.Search(len(r.starts), func(k int) bool { return r.starts[k] > start }) - 1
	if slab := r.slabs[i]; stop-r.starts[i] <= len(slab) {
		return maphash.Bytes(r.seed, slab[start-r.starts[i]:stop-r.starts[i]])
	}
	var b []byte // a block across slabs: hashed from a copy
	for ; start < stop; i++ {
		p := r.slabs[i][start-r.starts[i]:]
		p = p[:min(len(p), stop-start)]
		b = append(b, p...)
		start += len(p)
	}
	return maphash.Bytes(r.seed, b)
}

// forgetBefore lets the rope drop what it knows of the text before off:
// no comparison will start there again.
func (r *rope) forgetBefore(off int) {
	i := sort.Search(len(r.gone), func(k int) bool { return r.gone[k].start >= off })
	if i > 0 {
		r.gone = append(r.gone[:0], r.gone[i:]...)
	}
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
	// The slab holding off: the last one starting at or before it.
	i := sort.Search(len(r.starts), func(k int) bool { return r.starts[k] > off }) - 1
	for s != "" {
		p := r.slabs[i][off-r.starts[i]:]
		k := min(len(p), len(s))
		if string(p[:k]) != s[:k] {
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

// String returns the whole text; only meaningful without a window.
func (r *rope) String() string {
	var b strings.Builder
	b.Grow(r.n)
	for _, s := range r.slabs {
		b.Write(s)
	}
	return b.String()
}
