package gemini

// Test hooks of the line reader (decode.go).

// SlowOnly makes d read every line with the member walk alone, as the
// reference of FuzzDecoderFastSlow. Call it before the first Feed.
func SlowOnly(d *Decoder) { d.read.slowOnly = true }

// Walks returns how many lines d read with the member walk.
func Walks(d *Decoder) int { return d.read.walks }
