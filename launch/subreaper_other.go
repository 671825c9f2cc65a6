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
