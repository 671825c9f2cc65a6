package testkit_test

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

// On Linux a watch covers every process carrying its marker as a whole
// argument, added or not: an escapee the test never heard of counts.
func TestTheMarkerScanFindsOnlyItsMarker(t *testing.T) {
	w, other, prefix := testkit.NewWatch(t), testkit.NewWatch(t), testkit.NewWatch(t)
	assert.NotEqual(t, w.Marker(), other.Marker())
	cmd, closeStdin := startChild(t, self(t), w.Marker())
	prefixed, _ := startChild(t, self(t), prefix.Marker()+"-longer")
	assert.Equal(t, []testkit.Proc{{PID: cmd.Process.Pid}}, w.Alive())
	assert.Empty(t, other.Alive())
	assert.Empty(t, prefix.Alive(), "a whole argument, not a prefix (%d)", prefixed.Process.Pid)

	closeStdin()
	w.RequireGone(waitLimit)
	require.NoError(t, cmd.Wait())
}

func TestTheCleanupKillsMarkedEscapees(t *testing.T) {
	var escapee *exec.Cmd
	t.Run("leaky", func(t *testing.T) {
		w := testkit.NewWatch(t)
		escapee, _ = startLeaky(t, self(t), w.Marker()) // never added
	})
	assert.Error(t, escapee.Wait(), "killed when the subtest ended")
}

func BenchmarkMarkerScan(b *testing.B) {
	w := testkit.NewWatch(b)
	_ = w.Marker()
	for b.Loop() {
		w.Alive()
	}
}
