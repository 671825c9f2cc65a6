package claude

// Test hooks.

// useWalkOnly makes d read every line with the member walk, never the first
// way (wire.go). Call it before the first Feed.
func (d *Decoder) useWalkOnly() { d.walkOnly = true }
