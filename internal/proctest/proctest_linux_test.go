package proctest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cursorkit/cursorkit/internal/proctest"
)

func TestSurvivorsFindsOnlyItsMarker(t *testing.T) {
	marker := proctest.Marker("proctest")
	cmd := startChild(t, marker)
	assert.Equal(t, []int{cmd.Process.Pid}, proctest.Survivors(marker))
	assert.Empty(t, proctest.Survivors(marker+"-other"))
	assert.Empty(t, proctest.Survivors(marker[:len(marker)-1]), "a whole argument, not a prefix")
}

func BenchmarkSurvivors(b *testing.B) {
	for b.Loop() {
		proctest.Survivors("no-such-marker")
	}
}
