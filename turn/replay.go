package turn

import (
	"bytes"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/supervise"
)

// Replay decodes a recorded turn as Run decodes a live one, without
// starting anything: each line of stdout fed to dec in order until dec
// fails the turn, and for a StderrDecoder each line of stderr after them
// (cut to maxStderrLine); the events handed to opts.OnEvent with what may
// hold the prompt's text withheld, as Run does; then the verdict on an
// agent that exited by itself with exitCode, the end of stderr its tail.
// Only opts.OnEvent and opts.StopAtRetry are used.
func Replay(dec Decoder, prompt string, stdout, stderr []byte, exitCode int, opts Options) (Outcome, error) {
	t := &live{dec: dec, guard: newWithhold(prompt), onEvent: opts.OnEvent, stopAtRetry: opts.StopAtRetry}
	o := supervise.Outcome{Ending: supervise.Exited, ExitCode: exitCode, Stop: supervise.StopNone}
	var runErr error
	for line := range bytes.Lines(stdout) {
		o.Lines++
		o.Bytes += int64(len(line))
		err := t.line(bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r")))
		if err == supervise.ErrFinished {
			o.Finished = true
		} else if err != nil {
			o.Ending, runErr, o.ExitCode = supervise.Aborted, err, -1
			break
		}
	}
	if sd, ok := dec.(StderrDecoder); ok && o.Ending == supervise.Exited {
		w := &lineWriter{max: maxStderrLine, line: func(line []byte) { t.stderrLine(sd, line) }}
		w.Write(stderr)
		if !bytes.HasSuffix(stderr, []byte("\n")) && len(stderr) > 0 {
			w.Write([]byte("\n"))
		}
	}
	if t.failed != nil && o.Ending == supervise.Exited {
		o.Ending, runErr, o.ExitCode = supervise.Aborted, t.failed, -1
	}
	if o.Ending == supervise.Exited && exitCode != 0 && !o.Finished {
		runErr = failure.New(failure.Process, "the agent exited with code %d", exitCode)
	}
	o.StderrTail = string(stderr[max(0, len(stderr)-16<<10):])
	return t.end(o, runErr)
}
