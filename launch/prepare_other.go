//go:build !linux

package launch

// PrepareGuard does nothing: only Linux has a launch guard (see its
// Linux documentation).
func PrepareGuard() {}
