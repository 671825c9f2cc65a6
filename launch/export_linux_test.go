package launch

import "context"

// StartGuard is what PrepareGuard does in the background, waited for:
// this program's guard started (or found running) on ctx.
func StartGuard(ctx context.Context) error {
	_, err := theGuard.get(ctx)
	return err
}

// GuardName is the launch guard's argv[0].
const GuardName = guardName
