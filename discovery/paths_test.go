package discovery

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

var win = rulesFor("windows")

func TestWindowsPathRules(t *testing.T) {
	tests := []struct {
		in          string
		abs         bool
		clean       string
		dir, base   string
		ext         string
		hasSep      bool
		volumeBytes int
	}{
		{in: `C:\Users\A User\npm\cursor-agent.cmd`, abs: true, clean: `C:\Users\A User\npm\cursor-agent.cmd`, dir: `C:\Users\A User\npm`, base: "cursor-agent.cmd", ext: ".cmd", hasSep: true, volumeBytes: 2},
		{in: `c:/x//y/./z/../agent.EXE`, abs: true, clean: `c:\x\y\agent.EXE`, dir: `c:/x//y/./z/..`, base: "agent.EXE", ext: ".EXE", hasSep: true, volumeBytes: 2},
		{in: `C:\x\run.cmd. . .`, abs: true, clean: `C:\x\run.cmd`, dir: `C:\x`, base: "run.cmd. . .", ext: ".cmd", hasSep: true, volumeBytes: 2},
		{in: `C:\..\..\x.exe`, abs: true, clean: `C:\x.exe`, dir: `C:\..\..`, base: "x.exe", ext: ".exe", hasSep: true, volumeBytes: 2},
		{in: `C:\x.exe`, abs: true, clean: `C:\x.exe`, dir: `C:\`, base: "x.exe", ext: ".exe", hasSep: true, volumeBytes: 2},
		{in: `\\server\share\bin\a.exe`, abs: true, clean: `\\server\share\bin\a.exe`, dir: `\\server\share\bin`, base: "a.exe", ext: ".exe", hasSep: true, volumeBytes: 14},
		{in: `\\?\C:\long\a.exe`, abs: true, clean: `\\?\C:\long\a.exe`, dir: `\\?\C:\long`, base: "a.exe", ext: ".exe", hasSep: true, volumeBytes: 6},
		{in: `\\?\UNC\srv\sh\a.cmd`, abs: true, clean: `\\?\UNC\srv\sh\a.cmd`, dir: `\\?\UNC\srv\sh\`, base: "a.cmd", ext: ".cmd", hasSep: true, volumeBytes: 14},
		{in: `C:relative.exe`, abs: false, clean: `C:relative.exe`, dir: `C:`, base: "relative.exe", ext: ".exe", hasSep: true, volumeBytes: 2},
		{in: `\rooted\a.bat`, abs: false, clean: `\rooted\a.bat`, dir: `\rooted`, base: "a.bat", ext: ".bat", hasSep: true},
		{in: `bin\a`, abs: false, clean: `bin\a`, dir: `bin`, base: "a", ext: "", hasSep: true},
		{in: `..\a.b.c`, abs: false, clean: `..\a.b.c`, dir: `..`, base: "a.b.c", ext: ".c", hasSep: true},
		{in: `cursor-agent`, abs: false, clean: `cursor-agent`, dir: ``, base: "cursor-agent", ext: "", hasSep: false},
		{in: `cursor.agent`, abs: false, clean: `cursor.agent`, dir: ``, base: "cursor.agent", ext: ".agent", hasSep: false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.abs, win.isAbs(tt.in), "isAbs")
			assert.Equal(t, tt.clean, win.clean(tt.in), "clean")
			assert.Equal(t, tt.dir, win.dir(tt.in), "dir")
			assert.Equal(t, tt.base, win.base(tt.in), "base")
			assert.Equal(t, tt.ext, win.ext(tt.in), "ext")
			assert.Equal(t, tt.hasSep, win.hasSeparator(tt.in), "hasSeparator")
			assert.Equal(t, tt.volumeBytes, winVolumeLen(tt.in), "volume")
			if runtime.GOOS == "windows" {
				// The hand-written rules agree with the OS's own where they overlap.
				assert.Equal(t, filepath.IsAbs(tt.in), win.isAbs(tt.in), "filepath.IsAbs")
				if !strings.HasPrefix(tt.in, `\\?\`) { // Go gives \\?\UNC as the volume of \\?\UNC\srv\sh
					assert.Equal(t, len(filepath.VolumeName(tt.in)), winVolumeLen(tt.in), "filepath.VolumeName")
				}
			}
		})
	}
}

func TestWindowsSplitList(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{`C:\a`, []string{`C:\a`}},
		{`C:\a;;C:\b;`, []string{`C:\a`, ``, `C:\b`, ``}},
		{`"C:\Program Files\x;y";C:\b`, []string{`C:\Program Files\x;y`, `C:\b`}},
		{`C:\a"b"c;d`, []string{`C:\abc`, `d`}},
		{`"unterminated;x`, []string{`unterminated;x`}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, win.splitList(tt.in), "%q", tt.in)
		if runtime.GOOS == "windows" && tt.in != "" {
			assert.Equal(t, filepath.SplitList(tt.in), win.splitList(tt.in), "filepath.SplitList(%q)", tt.in)
		}
	}
	assert.Equal(t, []string{"/a", "", "b"}, rulesFor("linux").splitList("/a::b"))
}

func TestParsePathExt(t *testing.T) {
	def := []string{".com", ".exe", ".bat", ".cmd"}
	tests := []struct {
		in   string
		want []string
	}{
		{"", def},
		{";;", def},
		{".COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH;.MSC;.PY;.PYW", []string{".com", ".exe", ".bat", ".cmd", ".vbs", ".vbe", ".js", ".jse", ".wsf", ".wsh", ".msc", ".py", ".pyw"}},
		{" cmd ; .Exe;.EXE;.", []string{".cmd", ".exe"}},
		{`.exe;.b\ad;.c"d;.ps1`, []string{".exe", ".ps1"}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, parsePathExt(tt.in), "%q", tt.in)
	}
}

func TestBounded(t *testing.T) {
	assert.Equal(t, "short", bounded("short", 180))
	long := strings.Repeat("é", 200) // 400 bytes
	got := bounded(long, 180)
	assert.LessOrEqual(t, len(got), 180)
	assert.True(t, strings.Contains(got, "…"))
	assert.True(t, strings.HasPrefix(got, "é") && strings.HasSuffix(got, "é"))
	assert.Equal(t, `"a?b"`, quoteBounded("a\nb", 10))
}

func FuzzSplitList(f *testing.F) {
	for _, s := range []string{`C:\a;;"C:\b;c";x`, `"`, `;;;`, `a"b;c"d`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		entries := win.splitList(list)
		if list == "" {
			assert.Empty(t, entries)
			return
		}
		semis := strings.Count(list, ";")
		assert.LessOrEqual(t, len(entries), semis+1)
		total := 0
		for _, e := range entries {
			assert.NotContains(t, e, `"`, "quotes are removed")
			total += len(e)
		}
		assert.Equal(t, len(list)-strings.Count(list, `"`)-(len(entries)-1), total, "only quotes and separators are removed")
		if !strings.Contains(list, `"`) && list != "" {
			assert.Equal(t, strings.Split(list, ";"), entries)
		}
		if runtime.GOOS == "windows" && list != "" {
			assert.Equal(t, filepath.SplitList(list), entries)
		}
	})
}

func FuzzParsePathExt(f *testing.F) {
	f.Add(".COM;.EXE;.BAT;.CMD")
	f.Add("cmd;;.Js; .ps1 ")
	f.Fuzz(func(t *testing.T, value string) {
		exts := parsePathExt(value)
		assert.NotEmpty(t, exts)
		seen := map[string]bool{}
		for _, e := range exts {
			assert.True(t, len(e) >= 2 && e[0] == '.', "%q", e)
			assert.Equal(t, strings.ToLower(e), e)
			assert.False(t, strings.ContainsAny(e, `\/:"; `), "%q", e)
			assert.False(t, seen[e])
			seen[e] = true
		}
		if isASCII(value) { // Unicode case mapping does not round-trip
			assert.Equal(t, exts, parsePathExt(strings.ToUpper(value)), "case-insensitive")
		}
	})
}

func FuzzWindowsClean(f *testing.F) {
	for _, s := range []string{`C:\a\..\b.cmd. .`, `\\srv\sh\x`, `c:/x//y`, `..\..\a`, `\\?\C:\a`, `C:`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		c := win.clean(p)
		assert.Equal(t, c, win.clean(c), "clean is idempotent: %q -> %q", p, c)
		assert.Equal(t, win.isAbs(p), win.isAbs(c), "clean keeps absoluteness: %q -> %q", p, c)
		assert.NotContains(t, c[winVolumeLen(c):], "/")
		if win.isAbs(c) {
			assert.NotContains(t, c[winVolumeLen(c):], `\..\`)
		}
		// Batch detection survives the normaliser: a name whose clean form is
		// a batch file classifies as one before cleaning too.
		if k, err := Classify("windows", c); err == nil && k == CmdShim && win.base(c) != "" && win.base(p) != "" && trimDotsSpaces(win.base(p)) != "" && !strings.HasSuffix(p, "..") {
			k2, err := Classify("windows", p)
			if err == nil {
				assert.Equal(t, CmdShim, k2, "%q", p)
			}
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
