package launch_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkNoTTY checks that pid has no controlling terminal (tty_nr 0 in
// /proc/PID/stat) and reads stdin from /dev/null.
func checkNoTTY(t *testing.T, pid int) {
	t.Helper()
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	require.NoError(t, err)
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	assert.Equal(t, "0", fields[4], "tty_nr") // state ppid pgrp session tty_nr
	in, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/0")
	require.NoError(t, err)
	assert.Equal(t, "/dev/null", in)
}
