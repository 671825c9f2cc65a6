package testkit_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

// TestLaneIsReal proves which lane ran: the Windows lane must really execute
// a Windows binary (and start cmd.exe), and the wrapper's marker
// (scripts/wine-exec) must agree with the native detection.
func TestLaneIsReal(t *testing.T) {
	marker := os.Getenv("CURSORKIT_UNDER_WINE") == "1"
	assert.Equal(t, marker, testkit.UnderWine(), "scripts/wine-exec marker and ntdll detection disagree")
	if runtime.GOOS != "windows" {
		assert.False(t, testkit.UnderWine())
		return
	}
	t.Logf("windows lane: GOOS=%s under wine=%v", runtime.GOOS, testkit.UnderWine())
	cmdExe := filepath.Join(os.Getenv("SystemRoot"), "System32", "cmd.exe")
	out, err := exec.Command(cmdExe, "/d", "/c", "echo lane-ok").Output()
	require.NoError(t, err)
	assert.Equal(t, "lane-ok", strings.TrimSpace(string(out)))
}

func TestSkipIfWine(t *testing.T) {
	var skipped bool
	t.Run("inner", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		testkit.SkipIfWine(t, "lack of something")
	})
	assert.Equal(t, testkit.UnderWine(), skipped)
}
