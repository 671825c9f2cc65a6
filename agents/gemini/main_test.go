package gemini_test

import (
	"os"
	"testing"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

// TestMain makes the test binary the agent stand-in when started as one.
func TestMain(m *testing.M) {
	testkit.RunIfChild()
	os.Exit(m.Run())
}
