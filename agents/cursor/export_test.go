package cursor

import "strings"

// Test hooks: what the agent said, which a decoder keeps only when told.

// keepText makes d keep everything the agent says, for text. Call it
// before the first Feed.
func (d *decoder) keepText() { d.text.said.window = 0 }

// setTextWindow makes d keep only the last n bytes of text (and hashes).
func (d *decoder) setTextWindow(n int) { d.text.said.window = n }

// saidText returns what the agent said; "" unless keepText was called.
func (d *decoder) saidText() string {
	if d.text.said.window != 0 {
		return ""
	}
	return d.text.said.String()
}

// saidLen returns the length of what the agent said so far.
func (d *decoder) saidLen() int { return d.text.said.len() }

// String returns the whole text; only meaningful without a window.
func (r *rope) String() string {
	var b strings.Builder
	b.Grow(r.n)
	for _, p := range r.pieces {
		b.WriteString(p.s)
	}
	return b.String()
}
