//go:build unix && !linux

package procid

import (
	"context"
	"os"
)

// signal verifies, then sends with kill(2): no pidfd here, so the window
// between the two stays open (see Signal).
func (id Identity) signal(ctx context.Context, sig os.Signal) error {
	s, err := unixSignal(sig)
	if err != nil {
		return err
	}
	return id.killVerified(ctx, s)
}
