package cursor

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"path/filepath"

	"github.com/cursorkit/cursorkit/internal/childenv"
	"github.com/cursorkit/cursorkit/internal/safefile"
	"github.com/cursorkit/cursorkit/turn"
)

// ModelChoice is the model the user chose in the Cursor CLI's own
// configuration: cli-config.json's "model" member (an object, "Selected
// model configuration") and "hasChangedDefaultModel" (the CLI's mark that
// the user changed it), as the user's file has them. The private home of
// a task hides that file; WritePrivateHome carries this one setting into
// the private config, so a turn without --model runs the user's choice
// rather than Cursor's default. The zero ModelChoice carries nothing.
type ModelChoice struct {
	Model   jsontext.Value
	Changed bool
}

// UserModelChoice reads the model choice of the user whose environment is
// env, on goos, from the Cursor CLI's configuration file: in
// $CURSOR_CONFIG_DIR when set, else on Linux and the BSDs in
// $XDG_CONFIG_HOME/cursor when set, else in the home's .cursor (HOME, on
// Windows USERPROFILE). A file that is missing, unreadable, not one JSON
// object or without a model object carries nothing: the zero ModelChoice.
// It reads nothing else of the file.
func UserModelChoice(env []string, goos string) ModelChoice {
	path := userConfigPath(env, goos)
	if path == "" {
		return ModelChoice{}
	}
	data, err := safefile.Read(path, homeConfigLimit)
	if err != nil {
		return ModelChoice{}
	}
	var doc struct {
		Model   jsontext.Value `json:"model"`
		Changed jsontext.Value `json:"hasChangedDefaultModel"`
	}
	if json.Unmarshal(data, &doc, turn.UnmarshalOptions()) != nil || doc.Model.Kind() != '{' {
		return ModelChoice{}
	}
	model := doc.Model.Clone()
	if model.Compact() != nil {
		return ModelChoice{}
	}
	return ModelChoice{Model: model, Changed: doc.Changed.Kind() == 't'}
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
