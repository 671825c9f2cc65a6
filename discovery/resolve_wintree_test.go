package discovery_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/discovery/discoverytest"
	"github.com/cursorkit/cursorkit/failure"
)

const (
	winApps = `C:\Users\A User\AppData\Local\Microsoft\WindowsApps`
	npmDir  = `C:\Users\A User\AppData\Roaming\npm`
)

func winEnv(path string) discovery.Env {
	return discovery.Env{
		GOOS:         "windows",
		Path:         path,
		Cwd:          `C:\repo`,
		SystemDir:    `C:\Windows\System32`,
		LocalAppData: `C:\Users\A User\AppData\Local`,
	}
}

func stepsWith(trail []discovery.Step, outcome string) []discovery.Step {
	var out []discovery.Step
	for _, s := range trail {
		if s.Outcome == outcome {
			out = append(out, s)
		}
	}
	return out
}

// TestResolveWindowsTree exercises the Windows rules against synthetic trees.
func TestResolveWindowsTree(t *testing.T) {
	pathCand := discovery.Candidate{Value: "cursor-agent", Source: discovery.SourcePath}
	override := func(v string) discovery.Candidate {
		return discovery.Candidate{Value: v, Source: discovery.SourceOverride}
	}
	tests := []struct {
		name      string
		fs        func(*discoverytest.FS)
		env       func(*discovery.Env)
		cand      discovery.Candidate
		wantPath  string
		wantKind  discovery.Kind
		wantErr   failure.Kind
		errHas    string
		warnHas   string
		noWarning bool
		trailHas  []string // outcome:detail-substring pairs
		alias     bool
	}{
		{
			name: "first directory wins over PATHEXT order across directories",
			fs: func(f *discoverytest.FS) {
				f.File(`C:\a\cursor-agent.cmd`, 0o644).File(`C:\b\cursor-agent.exe`, 0o644)
			},
			env:       func(e *discovery.Env) { e.Path = `C:\a;C:\b` },
			cand:      pathCand,
			wantPath:  `C:\a\cursor-agent.cmd`,
			wantKind:  discovery.CmdShim,
			noWarning: true,
		},
		{
			name: "PATHEXT order decides within a directory (default)",
			fs: func(f *discoverytest.FS) {
				f.File(`C:\a\cursor-agent.cmd`, 0o644).File(`C:\a\cursor-agent.exe`, 0o644)
			},
			env:      func(e *discovery.Env) { e.Path = `C:\a` },
			cand:     pathCand,
			wantPath: `C:\a\cursor-agent.exe`,
			wantKind: discovery.Native,
		},
		{
			name: "PATHEXT order from the environment, case-insensitive, dots optional",
			fs: func(f *discoverytest.FS) {
				f.File(`C:\a\Cursor-Agent.CMD`, 0o644).File(`C:\a\cursor-agent.exe`, 0o644)
			},
			env:      func(e *discovery.Env) { e.Path = `C:\a`; e.PathExt = "cmd;.EXE" },
			cand:     pathCand,
			wantPath: `C:\a\cursor-agent.cmd`,
			wantKind: discovery.CmdShim,
		},
		{
			name: ".com comes first in the default PATHEXT",
			fs: func(f *discoverytest.FS) {
				f.File(`C:\a\cursor-agent.com`, 0o644).File(`C:\a\cursor-agent.exe`, 0o644)
			},
			env:      func(e *discovery.Env) { e.Path = `C:\a` },
			cand:     pathCand,
			wantPath: `C:\a\cursor-agent.com`,
			wantKind: discovery.Native,
		},
		{
			name:     "empty entries skipped and reported",
			fs:       func(f *discoverytest.FS) { f.File(`C:\b\cursor-agent.exe`, 0o644) },
			env:      func(e *discovery.Env) { e.Path = `;;C:\a;;C:\b;` },
			cand:     pathCand,
			wantPath: `C:\b\cursor-agent.exe`,
			wantKind: discovery.Native,
			trailHas: []string{"skipped:empty PATH entries", "no-match:"},
		},
		{
			name: "relative entries refused and reported, even when they hold a match",
			fs: func(f *discoverytest.FS) {
				f.File(`C:\repo\bin\cursor-agent.cmd`, 0o644).File(`C:\repo\cursor-agent.exe`, 0o644).File(`C:\z\cursor-agent.exe`, 0o644)
			},
			env:      func(e *discovery.Env) { e.Path = `bin;.;\rooted;D:drive;C:\z` },
			cand:     pathCand,
			wantPath: `C:\z\cursor-agent.exe`,
			wantKind: discovery.Native,
			warnHas:  "current directory holds cursor-agent.exe",
			trailHas: []string{"refused:relative PATH entry", "ignored:never searched"},
		},
		{
			name: "planted .\\cursor-agent.cmd in the current directory is ignored but reported",
			fs: func(f *discoverytest.FS) {
				f.File(`C:\repo\cursor-agent.cmd`, 0o644).File(`C:\tools\cursor-agent.exe`, 0o644)
			},
			env:      func(e *discovery.Env) { e.Path = `C:\tools` },
			cand:     pathCand,
			wantPath: `C:\tools\cursor-agent.exe`,
			wantKind: discovery.Native,
			warnHas:  `current directory holds cursor-agent.cmd, ignored (it is never searched): C:\repo\cursor-agent.cmd`,
			trailHas: []string{"ignored:"},
		},
		{
			name:     "planted file alone is not found, and the failure says why",
			fs:       func(f *discoverytest.FS) { f.File(`C:\repo\cursor-agent.cmd`, 0o644).Dir(`C:\tools`) },
			env:      func(e *discovery.Env) { e.Path = `C:\tools` },
			cand:     pathCand,
			wantErr:  failure.MissingCLI,
			errHas:   "not found in 1 PATH directories; the current directory holds cursor-agent.cmd, ignored",
			warnHas:  "current directory holds",
			trailHas: []string{"ignored:", "not-found:"},
		},
		{
			name:      "the current directory as an explicit absolute PATH entry is searched",
			fs:        func(f *discoverytest.FS) { f.File(`C:\repo\cursor-agent.cmd`, 0o644) },
			env:       func(e *discovery.Env) { e.Path = `c:\REPO\` },
			cand:      pathCand,
			wantPath:  `c:\REPO\cursor-agent.cmd`, // the PATH entry's spelling
			wantKind:  discovery.CmdShim,
			noWarning: true,
		},
		{
			name: "extensionless npm sh shim is skipped, the search goes on",
			fs: func(f *discoverytest.FS) {
				f.File(`C:\first\cursor-agent`, 0o755).File(npmDir+`\cursor-agent.cmd`, 0o644)
			},
			env:      func(e *discovery.Env) { e.Path = `C:\first;` + npmDir },
			cand:     pathCand,
			wantPath: npmDir + `\cursor-agent.cmd`,
			wantKind: discovery.CmdShim,
			trailHas: []string{"skipped:no extension: not launchable on Windows"},
		},
		{
			name: "npm layout: the .cmd beside the sh and .ps1 is chosen",
			fs: func(f *discoverytest.FS) {
				f.File(npmDir+`\cursor-agent`, 0o755).File(npmDir+`\cursor-agent.cmd`, 0o644).File(npmDir+`\cursor-agent.ps1`, 0o644)
			},
			env:      func(e *discovery.Env) { e.Path = npmDir; e.PathExt = ".PS1;.COM;.EXE;.BAT;.CMD" },
			cand:     pathCand,
			wantPath: npmDir + `\cursor-agent.cmd`,
			wantKind: discovery.CmdShim,
			trailHas: []string{"skipped:.ps1 scripts are used only when named explicitly"},
		},
		{
			name:     "only an extensionless hit: not found, reason names it",
			fs:       func(f *discoverytest.FS) { f.File(npmDir+`\cursor-agent`, 0o755) },
			env:      func(e *discovery.Env) { e.Path = npmDir },
			cand:     pathCand,
			wantErr:  failure.MissingCLI,
			errHas:   "skipped cursor-agent (no extension",
			trailHas: []string{"skipped:no extension"},
		},
		{
			name: "unsupported PATHEXT extension is skipped",
			fs: func(f *discoverytest.FS) {
				f.File(`C:\a\cursor-agent.js`, 0o644).File(`C:\b\cursor-agent.exe`, 0o644)
			},
			env:      func(e *discovery.Env) { e.Path = `C:\a;C:\b`; e.PathExt = ".JS;.EXE" },
			cand:     pathCand,
			wantPath: `C:\b\cursor-agent.exe`,
			wantKind: discovery.Native,
			trailHas: []string{"skipped:extension \".js\" is not launchable"},
		},
		{
			name: "App Execution Alias stub ranks below a real file later on PATH",
			fs: func(f *discoverytest.FS) {
				f.Alias(winApps+`\cursor-agent.exe`).File(`C:\b\cursor-agent.cmd`, 0o644)
			},
			env:      func(e *discovery.Env) { e.Path = winApps + `;C:\b` },
			cand:     pathCand,
			wantPath: `C:\b\cursor-agent.cmd`,
			wantKind: discovery.CmdShim,
			trailHas: []string{"fallback:App Execution Alias stub in WindowsApps"},
		},
		{
			name:     "App Execution Alias stub alone is used, with a warning",
			fs:       func(f *discoverytest.FS) { f.Alias(winApps + `\cursor-agent.exe`).Dir(`C:\b`) },
			env:      func(e *discovery.Env) { e.Path = winApps + `;C:\b` },
			cand:     pathCand,
			wantPath: winApps + `\cursor-agent.exe`,
			wantKind: discovery.Native,
			alias:    true,
			warnHas:  "only an App Execution Alias stub was found",
			trailHas: []string{"fallback:", "chosen:App Execution Alias stub"},
		},
		{
			name: "App Execution Alias stub as Go 1.23+ Stat reports it (irregular, not an error)",
			fs: func(f *discoverytest.FS) {
				f.AliasIrregular(winApps+`\cursor-agent.exe`).File(`C:\b\cursor-agent.exe`, 0o644)
			},
			env:      func(e *discovery.Env) { e.Path = winApps + `;C:\b` },
			cand:     pathCand,
			wantPath: `C:\b\cursor-agent.exe`,
			wantKind: discovery.Native,
			trailHas: []string{"fallback:App Execution Alias stub in WindowsApps"},
		},
		{
			name:     "a zero-byte batch file that opens is a real file",
			fs:       func(f *discoverytest.FS) { f.Empty(`C:\a\cursor-agent.cmd`, 0o644) },
			env:      func(e *discovery.Env) { e.Path = `C:\a` },
			cand:     pathCand,
			wantPath: `C:\a\cursor-agent.cmd`,
			wantKind: discovery.CmdShim,
		},
		{
			name: "a directory named like the target is skipped",
			fs: func(f *discoverytest.FS) {
				f.Dir(`C:\a\cursor-agent.exe`).File(`C:\a\cursor-agent.cmd`, 0o644)
			},
			env:      func(e *discovery.Env) { e.Path = `C:\a` },
			cand:     pathCand,
			wantPath: `C:\a\cursor-agent.cmd`,
			wantKind: discovery.CmdShim,
			trailHas: []string{"skipped:is a directory"},
		},
		{
			name:     "an unreadable entry is skipped",
			fs:       func(f *discoverytest.FS) { f.Denied(`C:\a\cursor-agent.exe`).File(`C:\b\cursor-agent.exe`, 0o644) },
			env:      func(e *discovery.Env) { e.Path = `C:\a;C:\b` },
			cand:     pathCand,
			wantPath: `C:\b\cursor-agent.exe`,
			wantKind: discovery.Native,
			trailHas: []string{"skipped:permission denied"},
		},
		{
			name:      "repeated PATH entries are searched once",
			fs:        func(f *discoverytest.FS) { f.Dir(`C:\a`).File(`C:\b\cursor-agent.exe`, 0o644) },
			env:       func(e *discovery.Env) { e.Path = `C:\a;c:\A\;C:/a;C:\b` },
			cand:      pathCand,
			wantPath:  `C:\b\cursor-agent.exe`,
			wantKind:  discovery.Native,
			trailHas:  []string{"skipped:2 repeated PATH entries"},
			noWarning: true,
		},
		{
			name:     "quoted PATH entry with a semicolon",
			fs:       func(f *discoverytest.FS) { f.File(`C:\Program Files\odd;dir\cursor-agent.exe`, 0o644) },
			env:      func(e *discovery.Env) { e.Path = `"C:\Program Files\odd;dir";C:\b` },
			cand:     pathCand,
			wantPath: `C:\Program Files\odd;dir\cursor-agent.exe`,
			wantKind: discovery.Native,
		},
		{
			name:     "a bare name with a PATHEXT extension is tried as is",
			fs:       func(f *discoverytest.FS) { f.File(`C:\a\cursor-agent.cmd`, 0o644).File(`C:\a\cursor-agent.exe`, 0o644) },
			env:      func(e *discovery.Env) { e.Path = `C:\a` },
			cand:     discovery.Candidate{Value: "cursor-agent.cmd", Source: discovery.SourceEnv},
			wantPath: `C:\a\cursor-agent.cmd`,
			wantKind: discovery.CmdShim,
		},
		{
			name:     "a dotted name without a known extension is tried as is, then with PATHEXT",
			fs:       func(f *discoverytest.FS) { f.File(`C:\a\cursor.agent.exe`, 0o644) },
			env:      func(e *discovery.Env) { e.Path = `C:\a` },
			cand:     discovery.Candidate{Value: "cursor.agent", Source: discovery.SourceEnv},
			wantPath: `C:\a\cursor.agent.exe`,
			wantKind: discovery.Native,
		},
		{
			name:     "a .ps1 named explicitly on PATH is PowerShell",
			fs:       func(f *discoverytest.FS) { f.File(`C:\a\cursor-agent.ps1`, 0o644) },
			env:      func(e *discovery.Env) { e.Path = `C:\a` },
			cand:     discovery.Candidate{Value: "cursor-agent.ps1", Source: discovery.SourceEnv},
			wantPath: `C:\a\cursor-agent.ps1`,
			wantKind: discovery.PowerShell,
		},
		{
			name:     "a .ps1 is never used implicitly",
			fs:       func(f *discoverytest.FS) { f.File(`C:\a\cursor-agent.ps1`, 0o644) },
			env:      func(e *discovery.Env) { e.Path = `C:\a`; e.PathExt = ".EXE;.PS1" },
			cand:     pathCand,
			wantErr:  failure.MissingCLI,
			errHas:   ".ps1 scripts are used only when named explicitly",
			trailHas: []string{"skipped:.ps1"},
		},
		{
			name:     "explicit unsupported extension on PATH from configuration is refused",
			fs:       func(f *discoverytest.FS) { f.File(`C:\a\cursor-agent.js`, 0o644) },
			env:      func(e *discovery.Env) { e.Path = `C:\a` },
			cand:     discovery.Candidate{Value: "cursor-agent.js", Source: discovery.SourceEnv},
			wantErr:  failure.Input,
			errHas:   `extension ".js" is not launchable`,
			trailHas: []string{"skipped:extension"},
		},
		{
			name: "override with spaces is one path, checked directly",
			fs: func(f *discoverytest.FS) {
				f.File(npmDir+`\cursor-agent.cmd`, 0o644).File(`C:\a\cursor-agent.exe`, 0o644)
			},
			env:       func(e *discovery.Env) { e.Path = `C:\a` },
			cand:      override(npmDir + `\cursor-agent.cmd`),
			wantPath:  npmDir + `\cursor-agent.cmd`,
			wantKind:  discovery.CmdShim,
			noWarning: true,
		},
		{
			name:     "override with trailing dots and spaces is a batch file",
			fs:       func(f *discoverytest.FS) { f.File(`C:\x\cursor-agent.cmd`, 0o644) },
			env:      func(e *discovery.Env) {},
			cand:     override(`C:\x\cursor-agent.CMD. . .`),
			wantPath: `C:\x\cursor-agent.CMD`,
			wantKind: discovery.CmdShim,
		},
		{
			name:     "override with forward slashes is normalised",
			fs:       func(f *discoverytest.FS) { f.File(`C:\x\cursor-agent.exe`, 0o644) },
			env:      func(e *discovery.Env) {},
			cand:     override(`C:/x//sub/../cursor-agent.exe`),
			wantPath: `C:\x\cursor-agent.exe`,
			wantKind: discovery.Native,
		},
		{
			name:     "UNC override",
			fs:       func(f *discoverytest.FS) { f.File(`\\server\share\bin\cursor-agent.exe`, 0o644) },
			env:      func(e *discovery.Env) {},
			cand:     override(`\\server\share\bin\cursor-agent.exe`),
			wantPath: `\\server\share\bin\cursor-agent.exe`,
			wantKind: discovery.Native,
		},
		{
			name:     "override .ps1 is PowerShell",
			fs:       func(f *discoverytest.FS) { f.File(npmDir+`\cursor-agent.ps1`, 0o644) },
			env:      func(e *discovery.Env) {},
			cand:     override(npmDir + `\cursor-agent.ps1`),
			wantPath: npmDir + `\cursor-agent.ps1`,
			wantKind: discovery.PowerShell,
		},
		{
			name: "override naming the extensionless sh uses the .cmd beside it, with a warning",
			fs: func(f *discoverytest.FS) {
				f.File(npmDir+`\cursor-agent`, 0o755).File(npmDir+`\cursor-agent.cmd`, 0o644)
			},
			env:      func(e *discovery.Env) {},
			cand:     override(npmDir + `\cursor-agent`),
			wantPath: npmDir + `\cursor-agent.cmd`,
			wantKind: discovery.CmdShim,
			warnHas:  "names no launchable file; using cursor-agent.cmd",
		},
		{
			name:     "override naming only an extensionless file is refused",
			fs:       func(f *discoverytest.FS) { f.File(npmDir+`\cursor-agent`, 0o755) },
			env:      func(e *discovery.Env) {},
			cand:     override(npmDir + `\cursor-agent`),
			wantErr:  failure.Input,
			errHas:   "no extension: not launchable on Windows",
			trailHas: []string{"refused:"},
		},
		{
			name:     "override with an unsupported extension is refused, naming it",
			fs:       func(f *discoverytest.FS) { f.File(`C:\x\cursor-agent.vbs`, 0o644) },
			env:      func(e *discovery.Env) {},
			cand:     override(`C:\x\cursor-agent.vbs`),
			wantErr:  failure.Input,
			errHas:   `extension ".vbs" is not launchable on Windows`,
			trailHas: []string{"refused:"},
		},
		{
			name:    "override holding quotes is refused",
			fs:      func(f *discoverytest.FS) { f.File(npmDir+`\cursor-agent.cmd`, 0o644) },
			env:     func(e *discovery.Env) {},
			cand:    override(`"` + npmDir + `\cursor-agent.cmd"`),
			wantErr: failure.Input,
			errHas:  "double quote",
		},
		{
			name:    "override that does not exist",
			fs:      func(f *discoverytest.FS) {},
			env:     func(e *discovery.Env) {},
			cand:    override(`C:\nowhere\cursor-agent.exe`),
			wantErr: failure.MissingCLI,
			errHas:  "no such file",
		},
		{
			name:     "relative override resolves against the current directory, with a warning",
			fs:       func(f *discoverytest.FS) { f.File(`C:\repo\tools\cursor-agent.cmd`, 0o644) },
			env:      func(e *discovery.Env) {},
			cand:     override(`.\tools\cursor-agent.cmd`),
			wantPath: `C:\repo\tools\cursor-agent.cmd`,
			wantKind: discovery.CmdShim,
			warnHas:  `resolved against the current directory: C:\repo\tools\cursor-agent.cmd`,
		},
		{
			name:     "rooted override takes the current directory's drive",
			fs:       func(f *discoverytest.FS) { f.File(`C:\tools\cursor-agent.exe`, 0o644) },
			env:      func(e *discovery.Env) {},
			cand:     override(`\tools\cursor-agent.exe`),
			wantPath: `C:\tools\cursor-agent.exe`,
			wantKind: discovery.Native,
			warnHas:  "resolved against the current directory",
		},
		{
			name:    "drive-relative override is refused",
			fs:      func(f *discoverytest.FS) { f.File(`C:\repo\cursor-agent.exe`, 0o644) },
			env:     func(e *discovery.Env) {},
			cand:    override(`C:cursor-agent.exe`),
			wantErr: failure.Input,
			errHas:  "drive-relative",
		},
		{
			name:    "relative override without an absolute cwd is refused",
			fs:      func(f *discoverytest.FS) {},
			env:     func(e *discovery.Env) { e.Cwd = "" },
			cand:    override(`tools\cursor-agent.exe`),
			wantErr: failure.Input,
			errHas:  "relative path",
		},
		{
			name:     "a bare name is any program's: Agent.EXE is searched like every other",
			fs:       func(f *discoverytest.FS) { f.File(`C:\a\agent.exe`, 0o644) },
			env:      func(e *discovery.Env) { e.Path = `C:\a` },
			cand:     override("Agent.EXE"),
			wantPath: `C:\a\Agent.EXE`,
			wantKind: discovery.Native,
		},
		{
			name:    "empty PATH",
			fs:      func(f *discoverytest.FS) {},
			env:     func(e *discovery.Env) { e.Path = "" },
			cand:    pathCand,
			wantErr: failure.MissingCLI,
			errHas:  "PATH is empty",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := discoverytest.NewWindows()
			tt.fs(fsys)
			env := winEnv("")
			tt.env(&env)
			res, err := discovery.Resolve(context.Background(), tt.cand, env, fsys)
			require.NotEmpty(t, res.Trail, "a trail is kept on success and failure")
			require.Len(t, res.Attempts, 1)
			assert.Equal(t, tt.cand.Value, res.Attempts[0].Candidate)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, tt.wantErr, failure.KindOf(err), "%v", err)
				assert.Contains(t, err.Error(), tt.errHas)
				assert.Empty(t, res.Path)
				assert.NotEqual(t, discovery.OutcomeChosen, res.Attempts[0].Outcome)
			} else {
				require.NoError(t, err)
				assert.Equal(t, tt.wantPath, res.Path)
				assert.Equal(t, tt.wantKind, res.Kind)
				assert.Equal(t, res.Path[strings.LastIndex(res.Path, `\`)+1:], res.Name)
				assert.Equal(t, tt.cand.Source, res.Source)
				assert.Equal(t, tt.cand.Value, res.Candidate)
				assert.Equal(t, tt.alias, res.Alias)
				assert.Equal(t, discovery.OutcomeChosen, res.Attempts[0].Outcome)
				chosen := stepsWith(res.Trail, discovery.OutcomeChosen)
				require.Len(t, chosen, 1)
				assert.Equal(t, res.Path, chosen[0].Path)
			}
			if tt.warnHas != "" {
				assert.Contains(t, strings.Join(res.Warnings, "\n"), tt.warnHas)
			}
			if tt.noWarning {
				assert.Empty(t, res.Warnings)
			}
			for _, want := range tt.trailHas {
				outcome, detail, _ := strings.Cut(want, ":")
				found := false
				for _, s := range stepsWith(res.Trail, outcome) {
					found = found || strings.Contains(s.Detail, detail)
				}
				assert.True(t, found, "trail lacks %s with %q: %+v", outcome, detail, res.Trail)
			}
			for _, s := range res.Trail {
				assert.Equal(t, tt.cand.Value, s.Candidate)
				assert.LessOrEqual(t, len(s.Detail), 180)
			}
		})
	}
}

// TestResolveWindowsStopsAtFirstDirectory proves the search reads no
// directory after the one that holds the match.
func TestResolveWindowsStopsAtFirstDirectory(t *testing.T) {
	fsys := discoverytest.NewWindows().File(`C:\a\cursor-agent.exe`, 0o644).File(`C:\b\cursor-agent.exe`, 0o644)
	env := winEnv(`C:\a;C:\b`)
	env.Cwd = ""
	res, err := discovery.Resolve(context.Background(), discovery.Candidate{Value: "cursor-agent", Source: discovery.SourcePath}, env, fsys)
	require.NoError(t, err)
	assert.Equal(t, `C:\a\cursor-agent.exe`, res.Path)
	for _, p := range fsys.Lookups() {
		assert.False(t, strings.HasPrefix(p, `C:\b`), "looked into C:\\b: %s", p)
	}
}

func TestResolveWindowsTrailingDotsOnABareName(t *testing.T) {
	fsys := discoverytest.NewWindows().File(`C:\a\cursor-agent.cmd`, 0o644)
	res, err := discovery.Resolve(context.Background(), discovery.Candidate{Value: "cursor-agent. .", Source: discovery.SourceEnv}, winEnv(`C:\a`), fsys)
	require.NoError(t, err)
	assert.Equal(t, `C:\a\cursor-agent.cmd`, res.Path)
}

// FuzzResolveWindows: any value and PATH against a fixed tree resolves to a
// launchable file that exists, or fails with a kind; trails stay bounded and
// a failure never quotes a PATH directory.
func FuzzResolveWindows(f *testing.F) {
	f.Add("cursor-agent", `C:\a;C:\b`, ".COM;.EXE;.BAT;.CMD")
	f.Add(`C:\b\cursor-agent.CMD. .`, `;;x;C:\a`, "")
	f.Add(`..\b\cursor-agent`, `"C:\a;b"`, ".PS1;.JS")
	f.Add(`\\srv\share\cursor-agent.exe`, `C:\WindowsApps`, "cmd")
	fsys := discoverytest.NewWindows().
		File(`C:\a\cursor-agent`, 0o755).File(`C:\b\cursor-agent.cmd`, 0o644).File(`C:\b\cursor-agent.ps1`, 0o644).
		File(`C:\b\cursor-agent.js`, 0o644).File(`C:\repo\cursor-agent.exe`, 0o644).File(`\\srv\share\cursor-agent.exe`, 0o644).
		Alias(`C:\WindowsApps\cursor-agent.exe`).Dir(`C:\b\dir.exe`)
	f.Fuzz(func(t *testing.T, value, path, pathext string) {
		env := winEnv(path)
		env.PathExt = pathext
		res, err := discovery.Resolve(context.Background(), discovery.Candidate{Value: value, Source: discovery.SourceOverride}, env, fsys)
		assert.LessOrEqual(t, len(res.Trail), 52)
		if err != nil {
			assert.Contains(t, []failure.Kind{failure.Input, failure.MissingCLI}, failure.KindOf(err))
			assert.Empty(t, res.Path)
			for _, dir := range []string{`C:\a`, `C:\b`, `WindowsApps`} {
				if !strings.Contains(value, dir) {
					assert.NotContains(t, err.Error(), dir)
				}
			}
			return
		}
		kind, cerr := discovery.Classify("windows", res.Path)
		require.NoError(t, cerr, res.Path)
		assert.Equal(t, kind, res.Kind)
		_, lerr := fsys.Lstat(res.Path)
		assert.NoError(t, lerr, "the resolved file exists: %s", res.Path)
		if kind == discovery.PowerShell {
			assert.True(t, strings.HasSuffix(strings.ToLower(strings.TrimRight(value, ". ")), ".ps1"), "a .ps1 only when named: %q", value)
		}
	})
}
