//go:build unix

package settingsapi

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// TestRealProbeRefusesSystemPrograms: programs that exit 0 on --version
// but are not the Cursor CLI are not saved, by absolute path or by name.
func TestRealProbeRefusesSystemPrograms(t *testing.T) {
	dir := testkit.TempDir(t)
	settings := filepath.Join(dir, "settings.json")
	base := realHandler(t, realOptions(settings, "/usr/bin:/bin"))
	for _, p := range []string{"/bin/true", "/usr/bin/env", "python3", "bash"} {
		t.Run(filepath.Base(p), func(t *testing.T) {
			if filepath.IsAbs(p) {
				if _, err := os.Stat(p); err != nil {
					t.Skipf("%s is not installed here", p)
				}
			} else if _, err := exec.LookPath(p); err != nil {
				t.Skipf("%s is not installed here", p)
			}
			r := putPath(t, base, p)
			require.Equal(t, 400, r.status, "body %s", r.body)
			e := r.errorBody(t)
			if filepath.IsAbs(p) {
				assert.Equal(t, failure.MissingCLI, e.Kind)
				assert.Contains(t, e.Message, "that program is not the Cursor CLI")
			} else {
				assert.Equal(t, failure.Input, e.Kind)
				assert.Contains(t, e.Message, "the path must be absolute")
			}
			_, err := os.Stat(settings)
			assert.ErrorIs(t, err, os.ErrNotExist, "nothing is saved")
		})
	}
}
