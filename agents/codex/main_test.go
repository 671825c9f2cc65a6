package codex_test

import (
	"os"
	"testing"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

// TestMain makes the test binary the replay stand-in when started as one.
func TestMain(m *testing.M) {
	testkit.RunIfChild()
	os.Exit(m.Run())
}
