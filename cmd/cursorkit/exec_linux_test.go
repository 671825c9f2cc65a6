package main

import (
	"bytes"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// assertExecTreeGone scans the process table: no live process may carry
// marker in its argv (a zombie's argv is empty).
func assertExecTreeGone(t *testing.T, marker string, _ []int) {
	t.Helper()
	names, _ := os.ReadDir("/proc")
	var found []int
	for _, n := range names {
		pid, err := strconv.Atoi(n.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + n.Name() + "/cmdline")
		if err != nil {
			continue
		}
		for _, arg := range bytes.Split(cmdline, []byte{0}) {
			if string(arg) == marker {
				found = append(found, pid)
			}
		}
	}
	assert.Empty(t, found, "survivors carrying %s", marker)
}
