//go:build !windows

package discovery

import "context"

func runWhere(context.Context, string, Env) WhereResult {
	return WhereResult{Status: whereUnavailable, ExitCode: -1, Detail: "where.exe exists only on Windows"}
}
