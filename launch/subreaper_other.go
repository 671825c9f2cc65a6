//go:build !linux

package launch

import (
	"errors"

	"github.com/cursorkit/cursorkit/failure"
)

// EnableSubreaper is Linux-only; elsewhere it returns an error wrapping
// errors.ErrUnsupported and changes nothing.
func EnableSubreaper() error {
	return failure.Wrap(failure.Setup, errors.ErrUnsupported, "child subreaper mode is Linux-only")
}

// subreaperMode is false: only Linux has a subreaper mode here.
func subreaperMode() bool { return false }

// orphansMayRemain is false: without a subreaper no orphan of the child's
// tree is ever reparented to this process.
func (p *Process) orphansMayRemain() bool { return false }
