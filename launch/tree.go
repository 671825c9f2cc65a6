package launch

import (
	"cmp"
	"slices"
)

// proc is one entry of a process-table snapshot.
type proc struct {
	Pid  int `json:"pid"`
	PPid int `json:"ppid"`
	// Group is the process group ID (POSIX); 0 when unknown (Windows).
	Group int `json:"group,omitzero"`
	// StartTime is the start time in the OS's units (clock ticks since boot
	// on Linux, FILETIME on Windows, microseconds on macOS), 0 when unknown;
	// with Pid it identifies a process, as a reused PID has another.
	StartTime uint64 `json:"startTime"`
}

// Same reports whether p and q share a PID and a known start time.
func (p proc) Same(q proc) bool {
	return p.Pid == q.Pid && p.StartTime != 0 && p.StartTime == q.StartTime
}

// descendants returns every process of table that descends from root by
// parent chain, root excluded, in breadth-first order. It never trusts a
// bare PID:
//   - an edge parent -> child counts only when the child started no earlier
//     than the parent (a parent PID since reused by a younger process);
//   - when table holds a different process under a node's PID (it died and
//     its PID was reused), only children older than that reuser are its;
//   - entries with an unknown start time are never returned nor followed;
//   - cycles and self-parented entries (Windows snapshots) are visited once.
//
// root need not be in table: on Windows a dead root's children keep its PID
// as their parent, and its recorded start time still identifies them.
func descendants(root proc, table []proc) []proc {
	// Two sorted copies instead of maps: children of a PID are a contiguous
	// run of byParent, and the current holder of a PID is found in byPid.
	byParent := make([]proc, 0, len(table))
	for _, e := range table {
		if e.StartTime != 0 && e.PPid != e.Pid {
			byParent = append(byParent, e)
		}
	}
	slices.SortFunc(byParent, func(a, b proc) int {
		if c := cmp.Compare(a.PPid, b.PPid); c != 0 {
			return c
		}
		return cmp.Compare(a.Pid, b.Pid)
	})
	byPid := slices.Clone(table)
	slices.SortStableFunc(byPid, func(a, b proc) int { return cmp.Compare(a.Pid, b.Pid) })

	visited := map[int]bool{root.Pid: true}
	var out []proc
	queue := []proc{root}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n.StartTime == 0 {
			continue
		}
		reuser, reused := proc{}, false
		if k, found := slices.BinarySearchFunc(byPid, n.Pid, func(e proc, pid int) int { return cmp.Compare(e.Pid, pid) }); found {
			reuser = byPid[k]
			reused = !reuser.Same(n)
		}
		first, _ := slices.BinarySearchFunc(byParent, n.Pid, func(e proc, ppid int) int { return cmp.Compare(e.PPid, ppid) })
		for _, c := range byParent[first:] {
			if c.PPid != n.Pid {
				break
			}
			if visited[c.Pid] || c.StartTime < n.StartTime {
				continue
			}
			if reused && c.StartTime >= reuser.StartTime {
				continue
			}
			visited[c.Pid] = true
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}
