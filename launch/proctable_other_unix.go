//go:build unix && !linux && !darwin

package launch

import "errors"

// snapshot is not implemented here: KillTree relies on the group alone.
func snapshot() ([]proc, error) {
	return nil, errors.ErrUnsupported
}

func startTimeOf(int) (uint64, error) { return 0, errors.ErrUnsupported }
