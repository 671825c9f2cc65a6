package agentsim

import (
	"bufio"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// spawnHow says how a worker is started.
type spawnHow int

const (
	spawnPlain      spawnHow = iota // a child in the simulator's own group / job
	spawnEscape                     // POSIX: its own session (setsid); Windows: job breakaway if allowed
	spawnDoubleFork                 // through an intermediate that exits at once
	// spawnDaemon is a double fork whose worker also leaves the session
	// (Windows: the job, if allowed) and scrubs the launch token from its
	// environment, as env -i, sudo and many daemons do.
	spawnDaemon
)

// launchIDEnv is the variable cursorkit's launch adds to a child's
// environment (launch.LaunchIDEnv), which a spawnDaemon worker drops.
const launchIDEnv = "CURSORKIT_LAUNCH_ID"

// workerEnv is a worker's environment: the process's own plus the
// simulator's settings as Main saw them (which may differ in-process).
func (s *sim) workerEnv() []string {
	env := append(os.Environ(), EnvMain+"=1", EnvMarker+"="+s.marker())
	for _, name := range []string{EnvScenario, EnvPIDDir, EnvHangLimit} {
		if v := s.getenv(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// workerCmd re-executes the simulator's executable as a worker, the
// marker in its argv too, so a process-table scan finds it.
func (s *sim) workerCmd(first, role string, lifetime time.Duration) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, first, "--marker="+s.marker(), "--role="+role, "--lifetime="+lifetime.String())
	cmd.Env = s.workerEnv()
	// Only an *os.File is handed down as the child's own stdout; anything
	// else would make os/exec copy through a pipe the worker does not hold.
	if f, ok := s.stdout.(*os.File); ok {
		cmd.Stdout = f
	}
	if f, ok := s.stderr.(*os.File); ok {
		cmd.Stderr = f
	}
	return cmd, nil
}

// startWorker starts a worker that holds stdout for lifetime and records
// its pid before returning, so a test that has read the next stdout line
// can rely on the pid file being there.
func (s *sim) startWorker(role string, lifetime time.Duration, how spawnHow) error {
	if how == spawnDoubleFork || how == spawnDaemon {
		cmd, err := s.workerCmd(argSpawn, role, lifetime)
		if err != nil {
			return err
		}
		if how == spawnDaemon {
			cmd.Args = append(cmd.Args, "--daemon")
		}
		return cmd.Run() // the intermediate exits as soon as its child runs
	}
	cmd, err := s.startHolder(role, lifetime, how == spawnEscape, false)
	if err != nil {
		return err
	}
	go cmd.Wait() // reap it if it dies while we live
	return nil
}

// startHolder starts a worker and records its pid. An escaping one is
// started with escapeAttr, a tokenless one without launchIDEnv. Windows
// refuses breakaway from a job that forbids it: that is the job doing its
// work, and the worker then starts inside it.
func (s *sim) startHolder(role string, lifetime time.Duration, escape, tokenless bool) (*exec.Cmd, error) {
	start := func(escape bool) (*exec.Cmd, error) {
		cmd, err := s.workerCmd(argWorker, role, lifetime)
		if err != nil {
			return nil, err
		}
		if tokenless {
			cmd.Env = slices.DeleteFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, launchIDEnv+"=") })
		}
		if escape {
			cmd.SysProcAttr = escapeAttr()
		}
		return cmd, cmd.Start()
	}
	cmd, err := start(escape)
	if err != nil && escape {
		var inside error
		if cmd, inside = start(false); inside != nil {
			return nil, errors.Join(err, inside)
		}
	} else if err != nil {
		return nil, err
	}
	s.writePID(cmd.Process.Pid, role)
	return cmd, nil
}

// workerFlags parses a worker's own argv; daemon is the intermediate's
// --daemon (see spawnDaemon).
func workerFlags(args []string) (role string, lifetime time.Duration, daemon bool) {
	lifetime = time.Minute
	for _, a := range args {
		switch name, v, _ := strings.Cut(a, "="); name {
		case "--role":
			role = v
		case "--lifetime":
			if d, err := time.ParseDuration(v); err == nil {
				lifetime = d
			}
		case "--daemon":
			daemon = true
		}
	}
	return role, lifetime, daemon
}

// worker holds the inherited stdout open and sleeps for its lifetime.
func (s *sim) worker(args []string) int {
	role, lifetime, _ := workerFlags(args)
	s.notePID(role)
	time.Sleep(lifetime)
	return 0
}

// spawnIntermediate is the middle of a double fork: it starts the real
// worker, records it and exits, leaving the worker orphaned.
func (s *sim) spawnIntermediate(args []string) int {
	role, lifetime, daemon := workerFlags(args)
	s.notePID(role + "-intermediate")
	if _, err := s.startHolder(role, lifetime, daemon, daemon); err != nil {
		fmt.Fprintf(s.stderr, "cursor-agent-sim: intermediate: %v\n", err)
		return 3
	}
	return 0
}

func (s *sim) notePID(role string) { s.writePID(os.Getpid(), role) }

// writePID leaves <EnvPIDDir>/<pid> holding role, when the directory is set.
func (s *sim) writePID(pid int, role string) {
	dir := s.getenv(EnvPIDDir)
	if dir == "" {
		return
	}
	os.WriteFile(filepath.Join(dir, strconv.Itoa(pid)), []byte(role+"\n"), 0o644)
}

// Record is what one invocation saw, appended as one JSON line to the file
// named by EnvRecord.
type Record struct {
	Args       []string `json:"args"`
	Env        []string `json:"env"`
	Stdin      string   `json:"stdin"`
	Cwd        string   `json:"cwd"`
	PID        int      `json:"pid"`
	Executable string   `json:"executable"`
	// Home is the HOME the invocation ran with (else USERPROFILE),
	// HomeFiles what was under it (at most maxHomeFiles entries).
	Home               string     `json:"home"`
	HomeFiles          []HomeFile `json:"homeFiles"`
	HomeFilesTruncated bool       `json:"homeFilesTruncated,omitzero"`
	// Sandbox and AllowedTools are --sandbox and --allowed-tools as parsed.
	Sandbox      string   `json:"sandbox"`
	AllowedTools []string `json:"allowedTools"`
	// ProjectMCPConfig is the workspace's .cursor/mcp.json when the turn
	// started (at most maxMCPConfig bytes), nil when there was none.
	ApproveMCPs      bool    `json:"approveMCPs"`
	ProjectMCPConfig *string `json:"projectMCPConfig"`
}

// HomeFile is one entry under HOME: its slash-separated path relative to
// HOME and its mode as fs.FileMode prints it ("dr-x------").
type HomeFile struct {
	Path string `json:"path"`
	Mode string `json:"mode"`
}

// maxHomeFiles bounds the listing of HOME (a real home can be large).
const maxHomeFiles = 256

// homeDir is the HOME an invocation runs with.
func (s *sim) homeDir() string {
	if h := s.getenv("HOME"); h != "" {
		return h
	}
	return s.getenv("USERPROFILE")
}

// listHome lists what is under home, in lexical order, bounded.
func listHome(home string) ([]HomeFile, bool) {
	files := []HomeFile{}
	truncated := false
	if home == "" {
		return files, false
	}
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == home {
			return nil
		}
		if len(files) == maxHomeFiles {
			truncated = true
			return filepath.SkipAll
		}
		info, ierr := d.Info()
		if ierr != nil {
			return nil
		}
		rel, _ := filepath.Rel(home, p)
		files = append(files, HomeFile{Path: filepath.ToSlash(rel), Mode: info.Mode().String()})
		return nil
	})
	return files, truncated
}

func (s *sim) record(stdin string) {
	path := s.getenv(EnvRecord)
	if path == "" {
		return
	}
	exe, _ := os.Executable()
	home := s.homeDir()
	files, truncated := listHome(home)
	err := appendLine(path, Record{Args: append([]string{}, s.args...), Env: os.Environ(), Stdin: stdin,
		Cwd: osGetwd(), PID: os.Getpid(), Executable: exe, Home: home, HomeFiles: files, HomeFilesTruncated: truncated,
		Sandbox: s.inv.sandbox, AllowedTools: s.inv.allowedTools, ApproveMCPs: s.inv.approveMCPs,
		ProjectMCPConfig: projectMCPConfig(s.workspace())})
	if err != nil {
		fmt.Fprintf(s.stderr, "cursor-agent-sim: record: %v\n", err)
	}
}

// workspace is --workspace, else the working directory.
func (s *sim) workspace() string {
	if s.inv.workspace != "" {
		return s.inv.workspace
	}
	return osGetwd()
}

// maxMCPConfig bounds how much of a .cursor/mcp.json is read.
const maxMCPConfig = 1 << 20

// projectMCPConfig is dir/.cursor/mcp.json, nil when it cannot be read.
func projectMCPConfig(dir string) *string {
	f, err := os.Open(filepath.Join(dir, ".cursor", "mcp.json"))
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxMCPConfig))
	if err != nil {
		return nil
	}
	str := string(b)
	return &str
}

// firstMCPServer is the first key of an mcp.json's mcpServers object, in
// file order; "" when there is none.
func firstMCPServer(config *string) string {
	if config == nil {
		return ""
	}
	dec := jsontext.NewDecoder(strings.NewReader(*config))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return ""
	}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return ""
		}
		if name.String() != "mcpServers" || dec.PeekKind() != '{' {
			if dec.SkipValue() != nil {
				return ""
			}
			continue
		}
		dec.ReadToken()
		if dec.PeekKind() != '"' {
			return ""
		}
		key, err := dec.ReadToken()
		if err != nil {
			return ""
		}
		return key.String()
	}
	return ""
}

// ReadRecords returns the records appended to path, oldest first.
func ReadRecords(path string) ([]Record, error) {
	return readLines[Record](path)
}

// readLines returns the JSON lines appended to path, oldest first.
func readLines[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("line %d: %w", len(lines)+1, err)
		}
		lines = append(lines, v)
	}
	return lines, sc.Err()
}

// appendLine appends v to path as one JSON line.
func appendLine(path string, v any) error {
	line, err := marshal(v)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write(append(line, '\n'))
	return err
}
