package launch_test

import (
	"context"
	"testing"

	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/launch"
)

// syntheticTable is a process table of n unrelated processes plus a tree of
// depth 3 and fan-out 4 under root.
func syntheticTable(n int) (launch.Proc, []launch.Proc) {
	root := launch.Proc{Pid: 100000, PPid: 1, StartTime: 5000}
	table := []launch.Proc{root}
	for i := 0; i < n; i++ {
		table = append(table, launch.Proc{Pid: 2 + i, PPid: 1 + i/10, StartTime: uint64(1 + i)})
	}
	next := root.Pid + 1
	level := []launch.Proc{root}
	for depth := 0; depth < 3; depth++ {
		var children []launch.Proc
		for _, parent := range level {
			for k := 0; k < 4; k++ {
				c := launch.Proc{Pid: next, PPid: parent.Pid, StartTime: parent.StartTime + 1}
				next++
				children = append(children, c)
			}
		}
		table = append(table, children...)
		level = children
	}
	return root, table
}

func BenchmarkDescendants(b *testing.B) {
	root, table := syntheticTable(2000)
	b.ReportAllocs()
	for b.Loop() {
		if got := launch.Descendants(root, table); len(got) != 84 {
			b.Fatalf("got %d descendants", len(got))
		}
	}
}

// BenchmarkKillTree measures KillTree plus the root's Wait on a tree of ten
// processes (the root, eight group members and one setsid grandchild on
// POSIX; cmd.exe trees on Windows).
func BenchmarkKillTree(b *testing.B) {
	kinds := append([]string{"bench-marker"}, benchTreeKinds...)
	for b.Loop() {
		b.StopTimer()
		p, err := launch.Start(context.Background(), selfPlan(kinds...), launch.Options{Env: testkit.ChildEnv("tree")})
		if err != nil {
			b.Fatal(err)
		}
		lines := lineReader(p.Stdout())
		for line := range lines {
			if line == "all-ready" {
				break
			}
		}
		b.StartTimer()
		if _, err := p.KillTree(); err != nil {
			b.Fatal(err)
		}
		if _, err := p.Wait(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		p.Close()
		b.StartTimer()
	}
}
