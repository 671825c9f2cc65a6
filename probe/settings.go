package probe

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"sync"

	"github.com/cursorkit/cursorkit/failure"
)

// settingsKey is the settings file's field for the configured binary.
const settingsKey = "cursorCliBinaryPath"

// maxSettingsFile bounds what is read from the settings file.
const maxSettingsFile = 1 << 20

// Settings is the content of the settings file, {"cursorCliBinaryPath":
// "..."}. Keys cursorkit does not know are kept as they were and written
// back unchanged.
type Settings struct {
	// BinaryPath is cursorCliBinaryPath, trimmed; "" means no override.
	BinaryPath string
	other      map[string]json.RawMessage
}

// LoadSettings reads the settings file at path. A missing file is empty
// settings. An unreadable or malformed file, or a cursorCliBinaryPath that
// is neither a string nor null, is a failure.Setup error naming the file.
func LoadSettings(path string) (Settings, error) {
	data, err := readFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Settings{}, nil
	}
	if err != nil {
		return Settings{}, failure.Wrap(failure.Setup, err, "reading the settings file %s", path)
	}
	return parseSettings(data, path)
}

// parseSettings decodes the settings file's content; path only names the
// file in errors.
func parseSettings(data []byte, path string) (Settings, error) {
	if len(data) > maxSettingsFile {
		return Settings{}, failure.New(failure.Setup, "the settings file %s is larger than %d bytes", path, maxSettingsFile)
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	if len(bytes.TrimSpace(data)) == 0 {
		return Settings{}, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
		return Settings{}, failure.New(failure.Setup, "the settings file %s is not a JSON object", path)
	}
	s := Settings{other: fields}
	if raw, ok := fields[settingsKey]; ok {
		delete(fields, settingsKey)
		var p *string
		if err := json.Unmarshal(raw, &p); err != nil {
			return Settings{}, failure.New(failure.Setup, "the settings file %s: %s must be a string or null", path, settingsKey)
		}
		if p != nil {
			s.BinaryPath = strings.TrimSpace(*p)
		}
	}
	return s, nil
}

// marshal renders s with its other keys; an empty BinaryPath omits the key.
func (s Settings) marshal() ([]byte, error) {
	fields := make(map[string]json.RawMessage, len(s.other)+1)
	for k, v := range s.other {
		fields[k] = v
	}
	if p := strings.TrimSpace(s.BinaryPath); p != "" {
		raw, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		fields[settingsKey] = raw
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(fields); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// SettingsStore serializes reads and writes of one settings file within a
// process: every Save and Update runs under the store's mutex, and the file
// is replaced atomically, so no reader (in this process or another) ever
// sees it half-written. Use one SettingsStore per file.
type SettingsStore struct {
	path string
	mu   sync.Mutex
}

// NewSettingsStore returns a store for the settings file at path.
func NewSettingsStore(path string) *SettingsStore { return &SettingsStore{path: path} }

// Path returns the settings file's path.
func (s *SettingsStore) Path() string { return s.path }

// Load reads the settings file, like LoadSettings.
func (s *SettingsStore) Load() (Settings, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return LoadSettings(s.path)
}

// Save replaces the settings file with settings atomically (a temporary
// file in the same directory, fsync, rename). The file is created 0600
// when new.
func (s *SettingsStore) Save(settings Settings) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.save(settings)
}

func (s *SettingsStore) save(settings Settings) error {
	data, err := settings.marshal()
	if err != nil {
		return failure.Wrap(failure.Other, err, "encoding the settings")
	}
	if err := writeFileAtomic(s.path, data, 0o600); err != nil {
		return failure.Wrap(failure.Setup, err, "saving the settings file %s", s.path)
	}
	return nil
}

// Update reads the settings, lets change modify them and saves the result,
// all under the store's lock, so concurrent updates of different keys never
// lose each other's writes. When change returns an error nothing is
// written and that error is returned.
func (s *SettingsStore) Update(change func(*Settings) error) (Settings, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	settings, err := LoadSettings(s.path)
	if err != nil {
		return Settings{}, err
	}
	if err := change(&settings); err != nil {
		return Settings{}, err
	}
	if err := s.save(settings); err != nil {
		return Settings{}, err
	}
	return settings, nil
}

// BinaryPath returns the configured cursorCliBinaryPath, "" when none.
func (s *SettingsStore) BinaryPath() (string, error) {
	settings, err := s.Load()
	return settings.BinaryPath, err
}

// SetBinaryPath saves p (trimmed) as cursorCliBinaryPath, keeping the other
// keys; an empty p clears the override. It does not validate p: the
// settings endpoint probes it with ProbeExact first.
func (s *SettingsStore) SetBinaryPath(p string) error {
	_, err := s.Update(func(settings *Settings) error {
		settings.BinaryPath = strings.TrimSpace(p)
		return nil
	})
	return err
}
