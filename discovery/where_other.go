//go:build !windows

package discovery

import "context"

// WhereCheck reports where.exe as unavailable: it exists only on Windows
// (a name it could not be given is reported as skipped, as on Windows). On
// Windows it runs where.exe for a bare name, for diagnostics only.
func WhereCheck(ctx context.Context, name string, env Env) WhereResult {
	if !whereable(name) {
		return WhereResult{Status: whereSkipped, ExitCode: -1, Detail: "not a plain bare name"}
	}
	return WhereResult{Status: whereUnavailable, ExitCode: -1, Detail: "where.exe exists only on Windows"}
}
