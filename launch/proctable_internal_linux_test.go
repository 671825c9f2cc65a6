package launch

import (
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePid(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int
		ok   bool
	}{
		{"pid", "4242", 4242, true},
		{"NUL-terminated", "17\x00\x00\x00", 17, true},
		{"one", "1", 1, true},
		{"zero", "0", 0, false},
		{"self", "self", 0, false},
		{"dot", ".", 0, false},
		{"empty", "", 0, false},
		{"starts with a NUL", "\x0012", 0, false},
		{"digits then letters", "12a", 0, false},
		{"sign", "+12", 0, false},
		{"too long for a PID", "1234567890", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parsePid([]byte(tc.in))
			assert.Equal(t, tc.ok, ok)
			if tc.ok {
				assert.Equal(t, tc.want, got)
			}
		})
	}
}

func FuzzParsePid(f *testing.F) {
	f.Add([]byte("4242\x00"))
	f.Add([]byte("self"))
	f.Fuzz(func(t *testing.T, name []byte) {
		pid, ok := parsePid(name)
		if !ok {
			return
		}
		assert.Positive(t, pid)
		// What was parsed is the name up to its first NUL, in decimal.
		end := len(name)
		for i, c := range name {
			if c == 0 {
				end = i
				break
			}
		}
		want, err := strconv.Atoi(string(name[:end]))
		require.NoError(t, err)
		assert.Equal(t, want, pid)
	})
}

// TestSnapshotSeesThisProcess checks the getdents walk and the stat reads
// against what this process knows of itself.
func TestSnapshotSeesThisProcess(t *testing.T) {
	table, err := snapshot()
	require.NoError(t, err)
	var self *Proc
	pids := map[int]bool{}
	for i, e := range table {
		assert.False(t, pids[e.Pid], "PID %d listed twice", e.Pid)
		pids[e.Pid] = true
		if e.Pid == os.Getpid() {
			self = &table[i]
		}
	}
	require.NotNil(t, self, "this process is in the table")
	assert.Equal(t, os.Getppid(), self.PPid)
	assert.Equal(t, syscall.Getpgrp(), self.Group)
	assert.NotZero(t, self.StartTime)
	assert.True(t, pids[os.Getppid()], "the parent is in the table")
	assert.Greater(t, len(table), 2)
}
