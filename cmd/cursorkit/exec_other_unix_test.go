//go:build unix && !linux

package main

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

// assertExecTreeGone checks every PID of the tree is gone.
func assertExecTreeGone(t *testing.T, _ string, pids []int) {
	t.Helper()
	for _, pid := range pids {
		assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "process %d survived", pid)
	}
}
