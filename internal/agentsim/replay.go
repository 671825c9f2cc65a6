package agentsim

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The replay stand-in: with EnvReplay set, the simulator is no cursor-agent
// but a stand-in for any other agent CLI (claude, codex, gemini), behind the
// same Install copies, .cmd shims and process watches. It plays a recorded
// stream instead of a scenario:
//
//   - `--version` (anywhere in argv) prints EnvReplayVersion and exits 0;
//   - anything else reads stdin to its end, appends the invocation to
//     EnvRecord, writes EnvReplay's file to stdout (EnvEventDelay between
//     lines), EnvReplayStderr's text and EnvReplayStderrFile's bytes to
//     stderr, and exits with EnvReplayExit (default 0); with EnvReplayHang
//     set it then sleeps until killed (bounded by EnvHangLimit) with its
//     stdout open, after leaving a helper worker when it is "worker".
//
// It checks nothing about its arguments: tests read them from the record.
const (
	// EnvReplay names the file whose bytes a prompt turn writes to stdout.
	EnvReplay = "CURSORKIT_SIM_REPLAY"
	// EnvReplayVersion is what `--version` prints (a newline is added).
	EnvReplayVersion = "CURSORKIT_SIM_REPLAY_VERSION"
	// EnvReplayStderr is text a turn writes to stderr after its stream.
	EnvReplayStderr = "CURSORKIT_SIM_REPLAY_STDERR"
	// EnvReplayStderrFile names a file whose bytes a turn writes to
	// stderr next: a recorded stderr too long for a variable.
	EnvReplayStderrFile = "CURSORKIT_SIM_REPLAY_STDERR_FILE"
	// EnvReplayExit is a turn's exit code.
	EnvReplayExit = "CURSORKIT_SIM_REPLAY_EXIT"
	// EnvReplayHang makes a turn hang after its output: "1", or "worker"
	// to leave a helper process holding stdout too.
	EnvReplayHang = "CURSORKIT_SIM_REPLAY_HANG"
	// EnvReplayFor, when set, limits the stand-in to the copies whose file
	// name (without .exe) is in this comma-separated list; the others stay
	// cursor-agent simulators, so one environment can run another agent
	// and a Cursor fallback.
	EnvReplayFor = "CURSORKIT_SIM_REPLAY_FOR"
)

// replays reports whether this copy is a replay stand-in.
func (s *sim) replays() bool {
	if s.getenv(EnvReplay) == "" {
		return false
	}
	only := s.getenv(EnvReplayFor)
	if only == "" {
		return true
	}
	exe, err := os.Executable()
	if err != nil {
		return false
	}
	name := strings.TrimSuffix(strings.ToLower(filepath.Base(exe)), ".exe")
	for _, n := range strings.Split(only, ",") {
		if strings.TrimSpace(strings.ToLower(n)) == name {
			return true
		}
	}
	return false
}

// replay is Main for the replay stand-in.
func (s *sim) replay(path string) int {
	for _, a := range s.args {
		if a == "--version" || a == "-v" || a == "-V" {
			s.record("")
			fmt.Fprintln(s.stdout, s.getenv(EnvReplayVersion))
			return 0
		}
	}
	s.notePID("main")
	prompt, err := io.ReadAll(s.stdin)
	s.record(string(prompt))
	if err != nil {
		fmt.Fprintf(s.stderr, "replay: reading stdin: %v\n", err)
		return 1
	}
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(s.stderr, "replay: %v\n", err)
		return 1
	}
	if delay := s.duration(EnvEventDelay, 0); delay > 0 {
		for r := bufio.NewReader(f); ; {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				_, _ = s.stdout.Write(line)
				time.Sleep(delay)
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				f.Close()
				fmt.Fprintf(s.stderr, "replay: %v\n", err)
				return 1
			}
		}
	} else {
		// Straight from the file (splice on Linux): a stand-in must never
		// be what a consumer's throughput measures (line-sized writes
		// capped a pipe at 120 MB/s, a seventh of what the cursor
		// simulator feeds).
		_, _ = io.Copy(s.stdout, f)
	}
	f.Close() // before a hang: the file stays deletable
	return s.replayEnd()
}

// replayEnd is what a turn does after its stream: stderr, a hang or
// its exit code.
func (s *sim) replayEnd() int {
	if text := s.getenv(EnvReplayStderr); text != "" {
		fmt.Fprintln(s.stderr, text)
	}
	if path := s.getenv(EnvReplayStderrFile); path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(s.stderr, "replay: %v\n", err)
			return 1
		}
		_, _ = s.stderr.Write(b)
	}
	switch s.getenv(EnvReplayHang) {
	case "":
	case "worker":
		if err := s.startWorker("replay", s.hangLimit(), spawnPlain); err != nil {
			fmt.Fprintf(s.stderr, "replay: starting a worker: %v\n", err)
			return 1
		}
		return s.hang()
	default:
		return s.hang()
	}
	code, err := strconv.Atoi(s.getenv(EnvReplayExit))
	if err != nil {
		return 0
	}
	return code
}
