//go:build unix

package launch

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestGroupSignalSafe: kill(-pgid) is sent only when it can reach nothing
// but the leader's own group. A leader still in the table under its own
// identity (a zombie nobody reaps, or a root this process is not the
// parent of) holds the group ID, so its group is signalled.
func TestGroupSignalSafe(t *testing.T) {
	leader := proc{Pid: 100, Group: 100, StartTime: 5000}
	member := proc{Pid: 101, PPid: 1, Group: 100, StartTime: 5001}
	tests := []struct {
		name     string
		reaped   bool
		table    []proc
		tableErr error
		want     bool
	}{
		{name: "not reaped: its PID cannot be reused", want: true},
		{name: "no table", reaped: true, tableErr: errors.New("unreadable")},
		{name: "the leader itself, a zombie", reaped: true, table: []proc{leader, member}, want: true},
		{name: "the leader itself, alone", reaped: true, table: []proc{leader}, want: true},
		{name: "another process under the leader's PID", reaped: true, table: []proc{{Pid: 100, Group: 100, StartTime: 9000}, member}},
		{name: "the leader's PID, its start unknown", reaped: true, table: []proc{{Pid: 100, Group: 100}, member}},
		{name: "the leader gone, members left", reaped: true, table: []proc{member}, want: true},
		{name: "the leader gone, no member", reaped: true, table: []proc{{Pid: 7, Group: 7, StartTime: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, groupSignalSafe(leader, tt.reaped, tt.table, tt.tableErr))
		})
	}
}
