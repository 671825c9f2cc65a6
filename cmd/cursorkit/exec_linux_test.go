package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cursorkit/cursorkit/internal/proctest"
)

// assertExecTreeGone scans the process table: no live process may carry
// marker in its argv (a zombie's argv is empty).
func assertExecTreeGone(t *testing.T, marker string, _ []int) {
	t.Helper()
	assert.Empty(t, proctest.Survivors(marker), "survivors carrying %s", marker)
}
