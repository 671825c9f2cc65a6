package settingsapi

import "github.com/cursorkit/cursorkit/probe"

// SettingsFile is the Store of a settings file: a *probe.SettingsStore,
// which replaces the file atomically and keeps its other keys.
type SettingsFile struct {
	*probe.SettingsStore
}

// BinaryPath returns the file's cursorCliBinaryPath, "" when none.
func (f SettingsFile) BinaryPath() (string, error) {
	s, err := f.Load()
	if err != nil {
		return "", err
	}
	return s.BinaryPath, nil
}

var _ Store = SettingsFile{}
