package supervise

import "unicode/utf8"

// tailRing keeps the last size bytes written to it. Its buffer grows up to
// size and only then becomes a ring: a quiet stderr costs little.
type tailRing struct {
	size int
	buf  []byte // all that was written while under size bytes, then a ring
	next int    // where the next byte goes
	full bool   // the ring has wrapped at least once
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
		if need := len(r.buf) + n; need < r.size {
			if need > cap(r.buf) { // double from a small start, never beyond size
				r.buf = append(make([]byte, 0, min(max(need, 2*cap(r.buf), 256), r.size)), r.buf...)
			}
			r.buf = append(r.buf, p...)
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
