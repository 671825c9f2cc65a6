package agentsim_test

import (
	"bufio"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

func TestMain(m *testing.M) {
	testkit.RunIfChild(mcpServerRole())
	os.Exit(m.Run())
}

// waitLong bounds waits for things that must happen (Wine starts processes
// slowly); it is never slept, only waited on.
const waitLong = 60 * time.Second

// simProc is a running simulator whose stdout is read line by line as it
// arrives. stdout and stderr are real files handed to the child, so the
// simulator's workers inherit them exactly as they would a supervisor's pipe,
// and Wait returns when the main process exits, not when the pipe closes.
type simProc struct {
	t       *testing.T
	cmd     *exec.Cmd
	w       *testkit.Watch // covers what the simulator records in its PIDDir
	stderr  string         // path of the stderr file
	mu      sync.Mutex
	out     []byte
	changed chan struct{}
	eof     chan struct{}
	exited  chan struct{}
	waitErr error
}

// startSim starts the simulator with the environment
// testkit.ChildEnv(testkit.Simulator, extra...) plus the PID directory of a
// watch, which kills survivors at cleanup.
func startSim(t *testing.T, extra []string, stdin string, args ...string) *simProc {
	t.Helper()
	bin := testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator)
	errPath := filepath.Join(testkit.TempDir(t), "stderr")
	watch := testkit.NewWatch(t) // after the directories: it kills before they go
	env := testkit.ChildEnv(testkit.Simulator, append(extra, agentsim.EnvPIDDir+"="+watch.PIDDir())...)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	errFile, err := os.Create(errPath)
	require.NoError(t, err)
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout = w
	cmd.Stderr = errFile
	configureCmd(cmd)
	require.NoError(t, cmd.Start())
	w.Close()
	errFile.Close()
	p := &simProc{t: t, cmd: cmd, w: watch, stderr: errPath, changed: make(chan struct{}, 1),
		eof: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		defer close(p.eof)
		defer r.Close()
		buf := make([]byte, 256<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				p.mu.Lock()
				p.out = append(p.out, buf[:n]...)
				p.mu.Unlock()
				select {
				case p.changed <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

func (p *simProc) stdout() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return string(p.out)
}

func (p *simProc) stderrText() string {
	b, _ := os.ReadFile(p.stderr)
	return string(b)
}

// waitOutput waits until pred holds for the stdout read so far.
func (p *simProc) waitOutput(pred func(out string) bool, what string) string {
	p.t.Helper()
	deadline := time.NewTimer(waitLong)
	defer deadline.Stop()
	for {
		out := p.stdout()
		if pred(out) {
			return out
		}
		select {
		case <-p.changed:
		case <-p.eof:
			out = p.stdout()
			require.True(p.t, pred(out), "stdout ended before %s; got %q; stderr %q", what, truncate(out), p.stderrText())
			return out
		case <-deadline.C:
			p.t.Fatalf("no %s within %v; stdout %q", what, waitLong, truncate(p.stdout()))
		}
	}
}

func (p *simProc) waitEOF() {
	p.t.Helper()
	select {
	case <-p.eof:
	case <-time.After(waitLong):
		p.t.Fatalf("stdout not closed within %v", waitLong)
	}
}

// waitExit waits for the main process and returns its exit code.
func (p *simProc) waitExit() int {
	p.t.Helper()
	select {
	case <-p.exited:
	case <-time.After(waitLong):
		p.t.Fatalf("simulator did not exit within %v", waitLong)
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *simProc) eofReached() bool {
	select {
	case <-p.eof:
		return true
	default:
		return false
	}
}

func (p *simProc) kill() {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Kill())
	p.waitExit()
}

// runSim runs a simulator that ends by itself and returns stdout, stderr
// and the exit code.
func runSim(t *testing.T, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	p := startSim(t, env, stdin, args...)
	code := p.waitExit()
	p.waitEOF()
	return p.stdout(), p.stderrText(), code
}

func truncate(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}

// event is the loose shape of a stream line, for assertions.
type event struct {
	Type        string         `json:"type"`
	Subtype     string         `json:"subtype"`
	SessionID   string         `json:"session_id"`
	Model       string         `json:"model"`
	CallID      string         `json:"call_id"`
	ModelCallID string         `json:"model_call_id"`
	TimestampMS int64          `json:"timestamp_ms"`
	IsError     bool           `json:"is_error"`
	Result      string         `json:"result"`
	Text        string         `json:"text"`
	ToolCall    jsontext.Value `json:"tool_call"`
	Usage       map[string]int `json:"usage"`
	Message     struct {
		Role    string `json:"role"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"message"`
	raw string
}

func (e event) text() string {
	var b strings.Builder
	for _, c := range e.Message.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// decodeLines splits out into lines (LF or CRLF, last line possibly
// unterminated) and decodes every JSON one; the rest are returned apart.
func decodeLines(t *testing.T, out string) (events []event, nonJSON []string) {
	t.Helper()
	rd := bufio.NewReader(strings.NewReader(out))
	for {
		line, err := rd.ReadString('\n')
		if trimmed := strings.TrimRight(line, "\r\n"); trimmed != "" {
			var e event
			if json.Unmarshal([]byte(trimmed), &e) == nil {
				e.raw = trimmed
				events = append(events, e)
			} else {
				nonJSON = append(nonJSON, trimmed)
			}
		}
		if err == io.EOF {
			return events, nonJSON
		}
		require.NoError(t, err)
	}
}

func types(events []event) []string {
	var ts []string
	for _, e := range events {
		t := e.Type
		if e.Subtype != "" {
			t += "/" + e.Subtype
		}
		ts = append(ts, t)
	}
	return ts
}
