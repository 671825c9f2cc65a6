package cursor

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"io/fs"
	"strings"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/safefile"
)

// settingsKey is the settings file's member naming the configured binary;
// maxSettingsFile bounds what is read of the file.
const (
	settingsKey     = "cursorCliBinaryPath"
	maxSettingsFile = 1 << 20
)

// Settings is the content of cursorkit's settings file,
// {"cursorCliBinaryPath": "..."} (docs/contract.md, "Settings"). Members
// cursorkit does not know are kept as they were and written back unchanged.
type Settings struct {
	// BinaryPath is cursorCliBinaryPath, trimmed; "" means no override.
	BinaryPath string
	other      map[string]jsontext.Value
}

// LoadSettings reads the settings file at path as internal/safefile reads
// every operator-named file (never blocking, a regular file once links are
// followed, at most 1 MiB). A missing file (or a link to a missing file) is
// empty settings. An unreadable, oversized, non-regular or malformed file,
// or a cursorCliBinaryPath that is neither a string nor null, is a
// failure.Setup error naming the file (docs/contract.md, "Settings").
func LoadSettings(path string) (Settings, error) {
	data, err := safefile.Read(path, maxSettingsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return Settings{}, nil
	}
	if err != nil {
		// safefile's errors name the file.
		return Settings{}, failure.Wrap(failure.Setup, err, "cannot read the settings file")
	}
	return parseSettings(data, path)
}

// UpdateSettings reads the settings file at path, lets change modify the
// settings and replaces the file with the result atomically (a temporary
// file in the same directory, fsync, rename), creating it 0600 when new;
// no reader ever sees it half written. A symbolic link at path is
// followed: the file it points to is replaced and the link kept; a link to
// a missing file is refused. When change returns an error, or the file
// cannot be read, nothing is written and that error is returned.
// Updates of one file from several goroutines must be serialized by the
// caller, or one may undo another's change.
func UpdateSettings(path string, change func(*Settings) error) (Settings, error) {
	s, err := LoadSettings(path)
	if err != nil {
		return Settings{}, err
	}
	if err := change(&s); err != nil {
		return Settings{}, err
	}
	data, err := s.marshal()
	if err != nil {
		return Settings{}, failure.Wrap(failure.Unclassified, err, "encoding the settings")
	}
	if err := safefile.Write(path, data, 0o600); err != nil {
		return Settings{}, failure.Wrap(failure.Setup, err, "cannot save the settings file %s", path)
	}
	return s, nil
}

// parseSettings decodes the settings file's content; path only names the
// file in errors.
func parseSettings(data []byte, path string) (Settings, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	if len(bytes.TrimSpace(data)) == 0 {
		return Settings{}, nil
	}
	var members map[string]jsontext.Value
	if err := json.Unmarshal(data, &members); err != nil || members == nil {
		return Settings{}, failure.New(failure.Setup, "the settings file %s is not a JSON object", path)
	}
	s := Settings{other: members}
	if raw, ok := members[settingsKey]; ok {
		delete(members, settingsKey)
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

// marshal renders s with its other members, sorted, indented by two
// spaces; an empty BinaryPath omits the member.
func (s Settings) marshal() ([]byte, error) {
	members := make(map[string]jsontext.Value, len(s.other)+1)
	for k, v := range s.other {
		members[k] = v
	}
	if p := strings.TrimSpace(s.BinaryPath); p != "" {
		raw, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		members[settingsKey] = raw
	}
	out, err := json.Marshal(members, json.Deterministic(true), jsontext.WithIndent("  "))
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
