package codex

// Test hooks of the line reader (decode.go).

// SlowPathOnly makes d read every line with the member walk, never with
// the one-pass json.Unmarshal. Call it before the first Feed.
func SlowPathOnly(d *Decoder) { d.lines.slowOnly = true }

// FastLines returns how many lines d read with the one-pass
// json.Unmarshal.
func FastLines(d *Decoder) int { return d.lines.fastLines }
