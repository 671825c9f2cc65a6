package discovery_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cursorkit/cursorkit/discovery"
)

func TestParseWhere(t *testing.T) {
	env := winEnv(`C:\Windows\system32;` + npmDir + `;` + winApps + `;C:\b`)
	tests := []struct {
		name       string
		out        string
		code       int
		query      string
		wantStatus string
		wantPaths  []string
		wantFirst  string
		dropped    []string
	}{
		{name: "silent, as under Wine", out: "", code: 0, wantStatus: discovery.WhereSilent},
		{name: "blank lines only are silent", out: "\r\n\r\n", code: 0, wantStatus: discovery.WhereSilent},
		{name: "exit 1 is not found", out: "", code: 1, wantStatus: discovery.WhereNotFound},
		{name: "exit 2 is an error", out: "ERROR: bad syntax\r\n", code: 2, wantStatus: discovery.WhereError},
		{name: "other codes are errors", out: "", code: 9009, wantStatus: discovery.WhereError},
		{
			name: "npm layout: cwd first, extensionless and .ps1 dropped",
			out: `C:\repo\cursor-agent.cmd` + "\r\n" +
				npmDir + `\cursor-agent` + "\r\n" +
				npmDir + `\cursor-agent.cmd` + "\r\n" +
				npmDir + `\cursor-agent.ps1` + "\r\n" +
				`C:\b\cursor-agent.exe` + "\r\n",
			code:       0,
			wantStatus: discovery.WhereFound,
			wantPaths:  []string{npmDir + `\cursor-agent.cmd`, `C:\b\cursor-agent.exe`},
			wantFirst:  npmDir,
			dropped: []string{
				`C:\repo\cursor-agent.cmd (current directory, never searched)`,
				npmDir + `\cursor-agent (`,
				npmDir + `\cursor-agent.ps1 (.ps1 used only when named explicitly)`,
			},
		},
		{
			name:       ".ps1 kept when asked for by name",
			out:        npmDir + `\cursor-agent.ps1` + "\n",
			query:      "cursor-agent.ps1",
			wantStatus: discovery.WhereFound,
			wantPaths:  []string{npmDir + `\cursor-agent.ps1`},
			wantFirst:  npmDir,
		},
		{
			name:       "INFO lines and unsupported extensions are not paths",
			out:        "INFO: Could not find files for the given pattern(s).\r\n" + `C:\b\cursor-agent.js` + "\r\n",
			wantStatus: discovery.WhereFound,
			dropped:    []string{`C:\b\cursor-agent.js (extension ".js" is not launchable`},
		},
		{
			name:       "undecodable console output is dropped",
			out:        "C:\\b\\cursor-\xe9agent.exe\r\n" + `C:\b\cursor-agent.exe`,
			wantStatus: discovery.WhereFound,
			wantPaths:  []string{`C:\b\cursor-agent.exe`},
			wantFirst:  `C:\b`,
			dropped:    []string{"not decodable"},
		},
		{
			name:       "alias stubs are listed like files",
			out:        winApps + `\cursor-agent.exe` + "\r\n" + `C:\b\cursor-agent.cmd` + "\r\n",
			wantStatus: discovery.WhereFound,
			wantPaths:  []string{winApps + `\cursor-agent.exe`, `C:\b\cursor-agent.cmd`},
			wantFirst:  winApps,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.query
			if q == "" {
				q = "cursor-agent"
			}
			w := discovery.ParseWhere([]byte(tt.out), tt.code, q, env)
			assert.Equal(t, tt.wantStatus, w.Status)
			assert.Equal(t, tt.code, w.ExitCode)
			assert.Equal(t, tt.wantPaths, w.Paths)
			if len(w.Paths) > 0 {
				assert.Equal(t, tt.wantFirst, w.Paths[0][:strings.LastIndexAny(w.Paths[0], `\/`)])
			} else {
				assert.Empty(t, tt.wantFirst)
			}
			joined := strings.Join(w.Dropped, "\n")
			for _, d := range tt.dropped {
				assert.Contains(t, joined, d)
			}
		})
	}
}

func TestParseWhereKeepsCwdWhenOnPath(t *testing.T) {
	env := winEnv(`C:\REPO;C:\b`)
	w := discovery.ParseWhere([]byte(`C:\repo\cursor-agent.cmd`+"\r\n"), 0, "cursor-agent", env)
	assert.Equal(t, []string{`C:\repo\cursor-agent.cmd`}, w.Paths)
}

func TestWhereDisagreement(t *testing.T) {
	found := func(paths ...string) discovery.WhereResult {
		return discovery.WhereResult{Status: discovery.WhereFound, Paths: paths}
	}
	ours := discovery.Resolution{Path: npmDir + `\cursor-agent.cmd`, Candidate: "cursor-agent"}
	tests := []struct {
		name  string
		where discovery.WhereResult
		res   discovery.Resolution
		want  string
	}{
		{"agree, case and separators aside", found(strings.ToLower(npmDir) + `/cursor-agent.cmd`), ours, ""},
		{"silent where changes nothing", discovery.WhereResult{Status: discovery.WhereSilent}, ours, ""},
		{"missing where changes nothing", discovery.WhereResult{Status: discovery.WhereUnavailable}, ours, ""},
		{"timed-out where changes nothing", discovery.WhereResult{Status: discovery.WhereTimedOut}, ours, ""},
		{"failed where changes nothing", discovery.WhereResult{Status: discovery.WhereError}, ours, ""},
		{"different first directory", found(`C:\other\cursor-agent.exe`), ours,
			`where.exe's first match is C:\other\cursor-agent.exe but cursorkit chose ` + ours.Path},
		{"alias first in where's list", found(winApps + `\cursor-agent.exe`), ours, "App Execution Alias stubs rank below real files"},
		{"where found nothing", discovery.WhereResult{Status: discovery.WhereNotFound}, ours, "where.exe found no cursor-agent but cursorkit chose"},
		{"we found nothing", found(`C:\b\cursor-agent.exe`), discovery.Resolution{Candidate: "cursor-agent"}, `where.exe found C:\b\cursor-agent.exe but cursorkit found nothing`},
		{"both found nothing", discovery.WhereResult{Status: discovery.WhereNotFound}, discovery.Resolution{}, ""},
		{"only non-launchable hits", discovery.WhereResult{Status: discovery.WhereFound}, ours, "listed no launchable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.where.Disagreement(tt.res)
			if tt.want == "" {
				assert.Empty(t, got)
				return
			}
			assert.Contains(t, got, tt.want)
			assert.LessOrEqual(t, len(got), 180)
		})
	}
}

func FuzzParseWhere(f *testing.F) {
	f.Add([]byte("C:\\a\\x.cmd\r\nC:\\a\\x\r\n"), 0, "x")
	f.Add([]byte(""), 0, "x")
	f.Add([]byte("INFO: nothing\r\n"), 1, "x")
	f.Add([]byte("\\\\srv\\sh\\x.exe\n\xff\xfe"), 0, "x.ps1")
	f.Fuzz(func(t *testing.T, out []byte, code int, name string) {
		env := winEnv(`C:\a;C:\b`)
		w := discovery.ParseWhere(out, code, name, env)
		assert.Equal(t, code, w.ExitCode)
		assert.LessOrEqual(t, len(w.Paths), 16)
		assert.LessOrEqual(t, len(w.Dropped), 16)
		for _, d := range w.Dropped {
			assert.LessOrEqual(t, len(d), 180)
		}
		for _, p := range w.Paths {
			_, err := discovery.Classify("windows", p)
			assert.NoError(t, err, "only launchable hits are kept: %q", p)
		}
		if len(w.Paths) > 0 {
			assert.Equal(t, discovery.WhereFound, w.Status)
		}
		switch code {
		case 0:
			assert.Contains(t, []string{discovery.WhereFound, discovery.WhereSilent}, w.Status)
		case 1:
			assert.Equal(t, discovery.WhereNotFound, w.Status)
		default:
			assert.Equal(t, discovery.WhereError, w.Status)
		}
		_ = w.Disagreement(discovery.Resolution{Path: `C:\a\x.exe`})
	})
}
