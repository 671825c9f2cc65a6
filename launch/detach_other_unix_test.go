//go:build unix && !linux

package launch_test

import "testing"

// checkNoTTY: the session check is all there is without /proc.
func checkNoTTY(*testing.T, int) {}
