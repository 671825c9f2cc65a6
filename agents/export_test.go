package agents

import (
	"context"
	"time"
)

// Inspect is an agent's own report, as InspectAll makes it for each agent.
func Inspect(a Agent, ctx context.Context, override string, getenv func(string) string, environ []string, timeout time.Duration) Report {
	return a.inspect(ctx, override, getenv, environ, timeout)
}
