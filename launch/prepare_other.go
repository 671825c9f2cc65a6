//go:build !linux

package launch

import "context"

// PrepareGuard does nothing: only Linux has a launch guard (see its
// Linux documentation).
func PrepareGuard(context.Context) {}
