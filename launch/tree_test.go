package launch_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cursorkit/cursorkit/launch"
)

func pids(procs []launch.Proc) []int {
	out := []int{}
	for _, p := range procs {
		out = append(out, p.Pid)
	}
	return out
}

func TestDescendants(t *testing.T) {
	root := launch.Proc{Pid: 100, PPid: 1, StartTime: 1000}
	tests := []struct {
		name  string
		root  launch.Proc
		table []launch.Proc
		want  []int
	}{
		{
			name: "chain and siblings, breadth first",
			root: root,
			table: []launch.Proc{
				root,
				{Pid: 101, PPid: 100, StartTime: 1001},
				{Pid: 102, PPid: 100, StartTime: 1002},
				{Pid: 103, PPid: 101, StartTime: 1003},
				{Pid: 104, PPid: 103, StartTime: 1004},
				{Pid: 7, PPid: 1, StartTime: 5},
			},
			want: []int{101, 102, 103, 104},
		},
		{
			name: "setsid grandchild is still found by parent chain",
			root: root,
			table: []launch.Proc{
				root,
				{Pid: 101, PPid: 100, Group: 100, StartTime: 1001},
				{Pid: 150, PPid: 101, Group: 150, StartTime: 1005},
			},
			want: []int{101, 150},
		},
		{
			name: "child older than its recorded parent is a stale PPID, not ours",
			root: root,
			table: []launch.Proc{
				root,
				{Pid: 101, PPid: 100, StartTime: 999},
				{Pid: 102, PPid: 100, StartTime: 1000},
			},
			want: []int{102},
		},
		{
			name: "root exited and its PID was reused: the reuser's children are not ours",
			root: root,
			table: []launch.Proc{
				{Pid: 100, PPid: 1, StartTime: 2000},   // the reuser
				{Pid: 101, PPid: 100, StartTime: 1500}, // ours (Windows keeps the dead parent's PID)
				{Pid: 102, PPid: 100, StartTime: 2001}, // the reuser's
				{Pid: 103, PPid: 101, StartTime: 1600},
			},
			want: []int{101, 103},
		},
		{
			name: "root absent from the table (Windows, exited root)",
			root: root,
			table: []launch.Proc{
				{Pid: 101, PPid: 100, StartTime: 1001},
				{Pid: 102, PPid: 101, StartTime: 1002},
			},
			want: []int{101, 102},
		},
		{
			name: "intermediate PID reused: children after the reuse are not followed",
			root: root,
			table: []launch.Proc{
				root,
				{Pid: 101, PPid: 100, StartTime: 1001},
				{Pid: 102, PPid: 101, StartTime: 1002},
				// 103 died (not in the table as itself); 104 was its child;
				// then 200's child took PID 103.
				{Pid: 104, PPid: 103, StartTime: 1010},
				{Pid: 103, PPid: 200, StartTime: 3000},
				{Pid: 105, PPid: 103, StartTime: 3001},
			},
			// 104 is reachable only through the dead 103, which is not in
			// the chain from root, so nothing beyond 102 is ours.
			want: []int{101, 102},
		},
		{
			name: "cycle and self-parented entries",
			root: root,
			table: []launch.Proc{
				root,
				{Pid: 101, PPid: 102, StartTime: 1001},
				{Pid: 102, PPid: 101, StartTime: 1001},
				{Pid: 103, PPid: 100, StartTime: 1001},
				{Pid: 100, PPid: 103, StartTime: 1002},
				{Pid: 0, PPid: 0, StartTime: 1},
				{Pid: 104, PPid: 104, StartTime: 1003},
			},
			want: []int{103},
		},
		{
			name: "unknown start times are never returned nor followed",
			root: root,
			table: []launch.Proc{
				root,
				{Pid: 101, PPid: 100, StartTime: 0},
				{Pid: 102, PPid: 101, StartTime: 1002},
				{Pid: 103, PPid: 100, StartTime: 1003},
			},
			want: []int{103},
		},
		{
			name:  "root with unknown start time has no provable descendants",
			root:  launch.Proc{Pid: 100},
			table: []launch.Proc{{Pid: 101, PPid: 100, StartTime: 1}},
			want:  []int{},
		},
		{
			name:  "empty table",
			root:  root,
			table: nil,
			want:  []int{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, pids(launch.Descendants(tc.root, tc.table)))
		})
	}
}

func TestProcSame(t *testing.T) {
	a := launch.Proc{Pid: 1, StartTime: 5}
	assert.True(t, a.Same(launch.Proc{Pid: 1, PPid: 9, StartTime: 5}))
	assert.False(t, a.Same(launch.Proc{Pid: 1, StartTime: 6}))
	assert.False(t, a.Same(launch.Proc{Pid: 2, StartTime: 5}))
	assert.False(t, launch.Proc{Pid: 1}.Same(launch.Proc{Pid: 1}), "unknown start times never match")
}

func TestExitStatusString(t *testing.T) {
	assert.Equal(t, "exit status 3", launch.ExitStatus{Code: 3}.String())
	assert.Equal(t, "signal 9", launch.ExitStatus{Code: -1, Signal: 9, Signaled: true}.String())
	assert.True(t, launch.ExitStatus{}.Success())
	assert.False(t, launch.ExitStatus{Code: -1, Signal: 15, Signaled: true}.Success())
}

func FuzzDescendants(f *testing.F) {
	f.Add([]byte{100, 1, 10, 101, 100, 11, 102, 101, 12})
	f.Add([]byte{1, 2, 3, 2, 1, 3, 3, 3, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		var table []launch.Proc
		for i := 0; i+2 < len(data); i += 3 {
			table = append(table, launch.Proc{Pid: int(data[i]), PPid: int(data[i+1]), StartTime: uint64(data[i+2])})
		}
		root := launch.Proc{Pid: 100, StartTime: 10}
		got := launch.Descendants(root, table)
		seen := map[int]bool{}
		for _, d := range got {
			assert.False(t, seen[d.Pid], "duplicate %d", d.Pid)
			seen[d.Pid] = true
			assert.NotEqual(t, root.Pid, d.Pid)
			assert.NotZero(t, d.StartTime)
			assert.GreaterOrEqual(t, d.StartTime, root.StartTime)
			assert.Contains(t, table, d)
		}
	})
}
