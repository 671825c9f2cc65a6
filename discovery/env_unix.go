//go:build !windows

package discovery

func addWindowsEnv(*Env) {}
