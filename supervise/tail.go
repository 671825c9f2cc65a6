package supervise

import "unicode/utf8"

// tailRing keeps the last size bytes written to it. Its buffer grows with
// what is written, up to size, and only then becomes a ring: a child that
// writes little to stderr costs little, however large the bound.
type tailRing struct {
	size int
	// buf holds everything written while that is less than size bytes;
	// from then on it is a ring of size bytes.
	buf  []byte
	next int  // where the next byte goes
	full bool // the ring has wrapped at least once
}

func newTailRing(size int) *tailRing {
	return &tailRing{size: max(size, 0)}
}

// Write keeps the tail of p; it never fails.
func (r *tailRing) Write(p []byte) (int, error) {
	n := len(p)
	if r.size == 0 || n == 0 {
		return n, nil
	}
	if len(r.buf) < r.size {
		if len(r.buf)+n < r.size {
			r.buf = appendWithin(r.buf, p, r.size)
			r.next = len(r.buf)
			return n, nil
		}
		// The ring starts: from here on, buf has exactly size bytes.
		ring := make([]byte, r.size)
		copy(ring, r.buf)
		r.buf = ring
	}
	size := len(r.buf)
	if len(p) >= size {
		copy(r.buf, p[len(p)-size:])
		r.next, r.full = 0, true
		return n, nil
	}
	c := copy(r.buf[r.next:], p)
	if c < len(p) {
		copy(r.buf, p[c:])
		r.full = true
	}
	r.next = (r.next + len(p)) % size
	if r.next == 0 {
		r.full = true
	}
	return n, nil
}

// appendWithin appends p to buf, whose capacity grows by doubling (from a
// small start) but never beyond limit.
func appendWithin(buf, p []byte, limit int) []byte {
	if need := len(buf) + len(p); need > cap(buf) {
		grown := make([]byte, len(buf), min(max(need, 2*cap(buf), 256), limit))
		copy(grown, buf)
		buf = grown
	}
	return append(buf, p...)
}

// String returns the kept tail, starting at a UTF-8 character boundary
// when the ring cut a character in two.
func (r *tailRing) String() string {
	var out []byte
	if r.full {
		out = make([]byte, 0, len(r.buf))
		out = append(out, r.buf[r.next:]...)
		out = append(out, r.buf[:r.next]...)
		for cut := 0; cut < utf8.UTFMax-1 && len(out) > 0 && !utf8.RuneStart(out[0]); cut++ {
			out = out[1:]
		}
	} else {
		out = r.buf[:r.next]
	}
	return string(out)
}
