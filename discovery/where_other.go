//go:build !windows

package discovery

import "context"

// WhereCheck reports where.exe as unavailable: it exists only on Windows.
// On Windows it runs where.exe for a bare name, for diagnostics only.
func WhereCheck(ctx context.Context, name string, env Env) WhereResult {
	return WhereResult{Status: WhereUnavailable, ExitCode: -1, Detail: "where.exe exists only on Windows"}
}
