//go:build unix

package settingsapi

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// TestProcessKilledMidSaveLeavesAWholeFile starts a child that saves the
// settings file in a tight loop, SIGKILLs it at a random moment, and checks
// the file still parses, keeps its other keys and holds one whole saved
// value. A big unrelated key makes each write long enough to be hit.
func TestProcessKilledMidSaveLeavesAWholeFile(t *testing.T) {
	t.Parallel() // it mostly waits on its savers, as the real probes do
	t.Run("file", func(t *testing.T) {
		t.Parallel()
		settings := filepath.Join(testkit.TempDir(t), "settings.json")
		killMidSave(t, settings, settings)
	})
	// Through a symbolic link: the file it leads to is whole and the link
	// is still a link after every kill.
	t.Run("symbolic link", func(t *testing.T) {
		t.Parallel()
		dir := testkit.TempDir(t)
		target := filepath.Join(dir, "dotfiles", "cursorkit.json")
		require.NoError(t, os.MkdirAll(filepath.Dir(target), 0o700))
		link := filepath.Join(dir, "settings.json")
		require.NoError(t, os.Symlink(target, link))
		killMidSave(t, link, target)
		info, err := os.Lstat(link)
		require.NoError(t, err)
		assert.NotZero(t, info.Mode()&os.ModeSymlink, "the settings file is still a link")
	})
}

// killMidSave runs the saver on settings, SIGKILLs it at random moments and
// checks file (settings itself, or the file a link leads to) each time.
func killMidSave(t *testing.T, settings, file string) {
	self, err := os.Executable()
	require.NoError(t, err)
	big := strings.Repeat("b", 256<<10)
	require.NoError(t, os.WriteFile(file, []byte(`{"big":"`+big+`","cursorCliBinaryPath":"/first"}`), 0o600))

	for round := range 12 {
		cmd := exec.Command(self, settings)
		cmd.Env = testkit.ChildEnv(saverRole.Name)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		line, err := bufio.NewReader(stdout).ReadString('\n')
		require.NoError(t, err, "round %d: the saver never became ready", round)
		require.Equal(t, "ready\n", line)

		// Let it save a random number of further times, then kill it.
		for range rand.IntN(40) {
			_, err := os.Stat(settings) // a syscall's worth of time per step
			require.NoError(t, err)
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		err = cmd.Wait()
		var exitErr *exec.ExitError
		require.ErrorAs(t, err, &exitErr)
		ws, ok := exitErr.Sys().(syscall.WaitStatus)
		require.True(t, ok)
		require.True(t, ws.Signaled(), "round %d: the saver died of SIGKILL, not %v", round, err)

		s, err := cursor.LoadSettings(file)
		require.NoError(t, err, "round %d: the file parses after a kill", round)
		assert.True(t, s.BinaryPath == "/first" || isSaverPath(s.BinaryPath), "round %d: a whole value, not %.80q", round, s.BinaryPath)
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Contains(t, string(raw), big, "round %d: other keys are kept", round)
	}
}

// isSaverPath reports whether p is exactly one of the saver's values.
func isSaverPath(p string) bool {
	var i int
	if _, err := fmt.Sscanf(p, "/opt/cursor-%d/", &i); err != nil || i < 0 {
		return false
	}
	return p == saverPath(i)
}
