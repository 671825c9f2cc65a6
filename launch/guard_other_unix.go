//go:build unix && !linux

package launch

import (
	"context"
	"os/exec"
)

// startGuarded has no launch guard to offer outside Linux, where no child
// subreaper exists (docs/architecture.md "The launch guard"): the child is
// always this process's own.
func (p *Process) startGuarded(context.Context, *exec.Cmd) (treeOwner, error) {
	return nil, errNoGuard
}
