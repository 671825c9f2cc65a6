package supervise

import "unicode/utf8"

// tailRing keeps the last len(buf) bytes written to it.
type tailRing struct {
	buf  []byte
	next int  // where the next byte goes
	full bool // buf has wrapped at least once
}

func newTailRing(size int) *tailRing {
	return &tailRing{buf: make([]byte, max(size, 0))}
}

// Write keeps the tail of p; it never fails.
func (r *tailRing) Write(p []byte) (int, error) {
	n := len(p)
	size := len(r.buf)
	if size == 0 {
		return n, nil
	}
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
	if r.next == 0 && len(p) > 0 {
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
