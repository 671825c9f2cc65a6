//go:build unix && !linux && !darwin

package launch

import "errors"

// snapshot is not implemented on this OS: KillTree then relies on the
// process group alone.
func snapshot() ([]proc, error) {
	return nil, errors.ErrUnsupported
}

func startTimeOf(int) (uint64, error) { return 0, errors.ErrUnsupported }
