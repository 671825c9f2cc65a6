//go:build linux

package discovery_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/discovery/discoverytest"
)

// BenchmarkResolution40Dirs measures resolving cursor-agent on a PATH of
// 40 real directories, against exec.LookPath and against spawning which(1),
// in the same run, with the file in the first, middle and last directory.
// Each iteration interleaves batches of the three (so machine noise hits
// all alike), keeps each one's fastest batch, and reports ns per
// resolution and the ratios:
//
//	x-lookpath        discovery time / exec.LookPath time   (target <= 1.5)
//	which-x           which time / discovery time           (target >= 100)
//	lookpath-which-x  which time / exec.LookPath time       (the ceiling any
//	                  one-stat-per-directory search can reach on this machine)
//
// It works with `-benchtime 1x` (make bench): every iteration is a complete
// measurement.
func BenchmarkResolution40Dirs(b *testing.B) {
	whichBin, err := exec.LookPath("which")
	if err != nil {
		b.Fatalf("which(1) is the baseline and must be installed: %v", err)
	}
	root := b.TempDir()
	dirs := make([]string, 40)
	for i := range dirs {
		dirs[i] = filepath.Join(root, fmt.Sprintf("bin%02d", i))
		if err := os.Mkdir(dirs[i], 0o755); err != nil {
			b.Fatal(err)
		}
	}
	pathValue := strings.Join(dirs, ":")
	b.Setenv("PATH", pathValue)
	env := discovery.Env{GOOS: "linux", Path: pathValue, Cwd: root}
	fsys := discovery.OSFS()
	cand := discovery.Candidate{Value: "cursor-agent", Source: discovery.SourcePath}
	ctx := context.Background()

	for _, pos := range []struct {
		name string
		dir  int
	}{{"first", 0}, {"middle", 19}, {"last", 39}} {
		b.Run(pos.name, func(b *testing.B) {
			target := filepath.Join(dirs[pos.dir], "cursor-agent")
			if err := os.WriteFile(target, []byte("#!/bin/sh\n"), 0o755); err != nil {
				b.Fatal(err)
			}
			defer os.Remove(target)
			resolve := func() {
				res, err := discovery.Resolve(ctx, cand, env, fsys)
				if err != nil || res.Path != target {
					b.Fatalf("discovery: %q %v", res.Path, err)
				}
			}
			lookPath := func() {
				if p, err := exec.LookPath("cursor-agent"); err != nil || p != target {
					b.Fatalf("LookPath: %q %v", p, err)
				}
			}
			which := func() {
				cmd := exec.Command(whichBin, "cursor-agent")
				cmd.Env = []string{"PATH=" + pathValue}
				out, err := cmd.Output()
				if err != nil || strings.TrimSpace(string(out)) != target {
					b.Fatalf("which: %q %v", out, err)
				}
			}
			// batch returns the time per call over n calls.
			batch := func(n int, f func()) time.Duration {
				start := time.Now()
				for range n {
					f()
				}
				return time.Since(start) / time.Duration(n)
			}
			const rounds, perBatch, whichPerRound = 7, 300, 4
			var ours, lp, wh time.Duration
			b.ResetTimer()
			for range b.N {
				ours, lp, wh = 1<<62, 1<<62, 1<<62
				for range rounds {
					ours = min(ours, batch(perBatch, resolve))
					lp = min(lp, batch(perBatch, lookPath))
					wh = min(wh, batch(whichPerRound, which))
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(ours.Nanoseconds()), "discovery-ns")
			b.ReportMetric(float64(lp.Nanoseconds()), "lookpath-ns")
			b.ReportMetric(float64(wh.Nanoseconds()), "which-ns")
			b.ReportMetric(float64(ours)/float64(lp), "x-lookpath")
			b.ReportMetric(float64(wh)/float64(ours), "which-x")
			b.ReportMetric(float64(wh)/float64(lp), "lookpath-which-x")
			b.Logf("file in directory %d of 40: discovery %v, exec.LookPath %v (%.2fx, target <= 1.5x), which %v (which/discovery %.0fx, target >= 100x; which/LookPath %.0fx)",
				pos.dir+1, ours, lp, float64(ours)/float64(lp), wh, float64(wh)/float64(ours), float64(wh)/float64(lp))
		})
	}
}

// BenchmarkResolveWindowsRules measures the pure Windows rules (PATHEXT
// expansion over 7 extensions, the extensionless and current-directory
// reports, duplicate detection, the trail) on a 40-directory PATH, against
// a filesystem that answers from a prepared map without allocating, so
// only the resolver's own cost is measured.
func BenchmarkResolveWindowsRules(b *testing.B) {
	var dirs []string
	for i := range 40 {
		dirs = append(dirs, fmt.Sprintf(`C:\Program Files\Tool %02d\bin`, i))
	}
	target := dirs[39] + `\cursor-agent.cmd`
	fsys := mapFS{target: discoverytest.NewWindows().File(target, 0o644)}
	env := discovery.Env{GOOS: "windows", Path: strings.Join(dirs, ";"), Cwd: `C:\repo`, PathExt: ".COM;.EXE;.BAT;.CMD;.VBS;.JS;.PS1"}
	cand := discovery.Candidate{Value: "cursor-agent", Source: discovery.SourcePath}
	b.ReportAllocs()
	for b.Loop() {
		if res, err := discovery.Resolve(context.Background(), cand, env, fsys); err != nil || res.Path != target {
			b.Fatal(res.Path, err)
		}
	}
}

// mapFS answers for one file and says "not found" for everything else.
type mapFS map[string]*discoverytest.FS

var errNotFound = &fs.PathError{Op: "lstat", Err: fs.ErrNotExist}

func (m mapFS) Lstat(name string) (fs.FileInfo, error) {
	if f, ok := m[name]; ok {
		return f.Lstat(name)
	}
	return nil, errNotFound
}
func (m mapFS) Stat(name string) (fs.FileInfo, error) { return m.Lstat(name) }
func (m mapFS) Readlink(name string) (string, error)  { return "", errNotFound }
