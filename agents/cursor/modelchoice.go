package cursor

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"path/filepath"

	"github.com/cursorkit/cursorkit/internal/childenv"
	"github.com/cursorkit/cursorkit/internal/safefile"
	"github.com/cursorkit/cursorkit/turn"
)

// UserModelChoice reads the model the user whose environment is env, on
// goos, chose in the Cursor CLI's own configuration file: its "model"
// member (an object, "Selected model configuration"), compacted, and
// whether its "hasChangedDefaultModel" (the CLI's mark that the user
// changed it) is true. The file is in $CURSOR_CONFIG_DIR when set, else on
// Linux and the BSDs in $XDG_CONFIG_HOME/cursor when set, else in the
// home's .cursor (HOME, on Windows USERPROFILE). A task's private home
// hides that file; HomeSpec carries this one setting into the private
// config, so a turn without --model runs the user's choice rather than
// Cursor's default. A file that is missing, unreadable, not one JSON
// object or without a model object gives nil; nothing else of it is read.
func UserModelChoice(env []string, goos string) (model jsontext.Value, changed bool) {
	path := userConfigPath(env, goos)
	if path == "" {
		return nil, false
	}
	data, err := safefile.Read(path, homeConfigLimit)
	if err != nil {
		return nil, false
	}
	var doc struct {
		Model   jsontext.Value `json:"model"`
		Changed jsontext.Value `json:"hasChangedDefaultModel"`
	}
	if json.Unmarshal(data, &doc, turn.UnmarshalOptions()) != nil || doc.Model.Kind() != '{' {
		return nil, false
	}
	model = doc.Model.Clone()
	if model.Compact() != nil {
		return nil, false
	}
	return model, doc.Changed.Kind() == 't'
}

// userConfigPath is where the Cursor CLI of the user whose environment is
// env reads its cli-config.json; "" when no home is known.
func userConfigPath(env []string, goos string) string {
	const name = "cli-config.json"
	if dir := childenv.Lookup(env, "CURSOR_CONFIG_DIR", goos); dir != "" {
		return filepath.Join(dir, name)
	}
	if goos != "windows" && goos != "darwin" {
		if xdg := childenv.Lookup(env, "XDG_CONFIG_HOME", goos); xdg != "" {
			return filepath.Join(xdg, "cursor", name)
		}
	}
	home := childenv.Lookup(env, "HOME", goos)
	if goos == "windows" {
		home = childenv.Lookup(env, "USERPROFILE", goos)
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".cursor", name)
}
