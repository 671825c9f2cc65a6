//go:build !windows

package mcpbridge

import "path/filepath"

// listenAddress is a Unix socket in the bridge's private directory: only
// this user can reach it, and it goes with the directory.
func listenAddress(dir string) (network, address string) { return "unix", filepath.Join(dir, "s") }
