package launch_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/launch"
)

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want launch.Proc
		ok   bool
	}{
		{"plain", "4242 (cursor-agent) S 4200 4242 4200 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100\n",
			launch.Proc{Pid: 4242, PPid: 4200, Group: 4242, StartTime: 987654}, true},
		{"name with spaces and parens", "17 (a) b (c) d) R 1 17 17 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0",
			launch.Proc{Pid: 17, PPid: 1, Group: 17, StartTime: 55}, true},
		{"zombie", "99 (sleep) Z 50 98 98 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12345 0 0",
			launch.Proc{Pid: 99, PPid: 50, Group: 98, StartTime: 12345}, true},
		{"init", "1 (systemd) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 2 0 0",
			launch.Proc{Pid: 1, PPid: 0, Group: 1, StartTime: 2}, true},
		{"truncated", "99 (sleep) Z 50 98 98 0", launch.Proc{}, false},
		{"no name", "99 sleep Z 50 98 98 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12345", launch.Proc{}, false},
		{"bad pid", "x (sleep) Z 50 98 98 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12345", launch.Proc{}, false},
		{"negative ppid", "9 (s) S -5 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1", launch.Proc{}, false},
		{"bad start", "9 (s) S 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -1", launch.Proc{}, false},
		{"empty", "", launch.Proc{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := launch.ParseProcStat([]byte(tc.in))
			if !tc.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("4242 (cursor-agent) S 4200 4242 4200 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100\n"))
	f.Add([]byte("17 (a) b (c) d) R 1 17 17 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0"))
	f.Add([]byte("1 () S"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := launch.ParseProcStat(data)
		if err != nil {
			assert.Equal(t, launch.Proc{}, p)
			return
		}
		assert.Positive(t, p.Pid)
		assert.GreaterOrEqual(t, p.PPid, 0)
		assert.GreaterOrEqual(t, p.Group, 0)
	})
}
