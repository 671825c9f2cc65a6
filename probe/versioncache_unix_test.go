//go:build unix

package probe

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/agentsim"
)

// TestVersionCacheFollowsTheSymlinkChain installs builds the way the
// agent's installer does (a stable link into a version folder) and
// proves that a new link target, or a new file with the same size and
// time, is probed again.
func TestVersionCacheFollowsTheSymlinkChain(t *testing.T) {
	b := newCachedBinary(t, agentsim.DefaultVersion+"\n")
	dir := filepath.Dir(b.path)
	v1 := filepath.Join(dir, "v1-agent")
	require.NoError(t, os.Rename(b.path, v1))
	require.NoError(t, os.Symlink(v1, b.path))

	_, err, ran := b.probe(t)
	require.NoError(t, err)
	require.True(t, ran)
	report, err, ran := b.probe(t)
	require.NoError(t, err)
	require.False(t, ran)
	assert.Equal(t, []string{b.path, v1}, report.Binary.Resolution.Links)

	// Only the chain changes: v2 is the same inode, size and time as v1.
	v2 := filepath.Join(dir, "v2-agent")
	require.NoError(t, os.Link(v1, v2))
	require.NoError(t, os.Remove(b.path))
	require.NoError(t, os.Symlink(v2, b.path))
	report, err, ran = b.probe(t)
	require.NoError(t, err)
	assert.True(t, ran, "a new link target is probed")
	assert.Equal(t, []string{b.path, v2}, report.Binary.Resolution.Links)

	// Only the inode changes: a copy with the same size and time.
	data, err := os.ReadFile(v2)
	require.NoError(t, err)
	info, err := os.Stat(v2)
	require.NoError(t, err)
	tmp := v2 + ".new"
	require.NoError(t, os.WriteFile(tmp, data, 0o755))
	require.NoError(t, os.Chtimes(tmp, time.Now(), info.ModTime()))
	require.NoError(t, os.Rename(tmp, v2))
	_, _, ran = b.probe(t)
	require.True(t, ran)
	_, _, ran = b.probe(t)
	assert.False(t, ran)
}
