//go:build !windows

package wine

func detected() bool { return false }
