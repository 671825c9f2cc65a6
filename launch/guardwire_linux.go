package launch

import (
	"encoding/binary"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"fmt"
	"io"

	"golang.org/x/sys/unix"

	"github.com/cursorkit/cursorkit/failure"
)

// The launch guard is this very binary, executed again as guardName with
// guardEnv set to guardProtocol, which the package's init recognises. It
// talks to its host over a stream socket on guardFD, in frames of a 4-byte
// big-endian length and a JSON guardMsg; a spawn request carries the
// child's stdin, stdout and stderr as SCM_RIGHTS on its first byte.
const (
	guardName     = "cursorkit-launch-guard"
	guardEnv      = "CURSORKIT_LAUNCH_GUARD"
	guardProtocol = "1"
	guardFD       = 3
	// maxGuardMsg bounds one message: a spawn's environment and argv,
	// which execve itself caps at a few MiB.
	maxGuardMsg = 16 << 20
)

// Operations of guardMsg.Op. The guard first says opReady. Then, for each
// child (ID), the host sends opSpawn (answered by opStarted or opFailed),
// opTerminate and opKill, each answered before the next request, and at
// last opClose (opClosed), after which the ID is forgotten. The guard
// reports the child's exit once, with opExited, whenever it happens.
const (
	opReady      = "ready"
	opSpawn      = "spawn"
	opStarted    = "started"
	opFailed     = "failed"
	opExited     = "exited"
	opTerminate  = "terminate"
	opTerminated = "terminated"
	opKill       = "kill"
	opKilled     = "killed"
	opClose      = "close"
	opClosed     = "closed"
)

// guardMsg is one message between host and guard; Op says which fields count.
type guardMsg struct {
	Op string `json:"op"`
	ID uint64 `json:"id,omitzero"` // the child's, except for opReady
	// opSpawn: the child to start, and the launch token in its Env. Path,
	// Args, Env and Dir travel as bytes (base64 in JSON): POSIX allows any
	// byte but NUL in them, and a JSON string would replace what is not
	// UTF-8.
	Path  []byte   `json:"path,omitempty"`
	Args  [][]byte `json:"args,omitempty"`
	Env   [][]byte `json:"env,omitempty"`
	Dir   []byte   `json:"dir,omitempty"`
	Token string   `json:"token,omitempty"`
	// opStarted: the child's identity and warnings; opReady: the guard's own.
	Pid       int               `json:"pid,omitzero"`
	StartTime uint64            `json:"startTime,omitzero"`
	Warnings  []failure.Warning `json:"warnings,omitempty"`
	Errno     int               `json:"errno,omitzero"`   // opFailed: of the fork or exec
	Status    *ExitStatus       `json:"status,omitempty"` // opExited
	Report    *KillReport       `json:"report,omitempty"` // opKilled, opClosed
	Done      bool              `json:"done,omitzero"`    // opTerminated: nothing was left to signal
	Err       string            `json:"err,omitempty"`    // a failure the guard met while answering
}

// wireStrings and fromWire carry a []string as the bytes guardMsg holds.
func wireStrings(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func fromWire(bs [][]byte) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}

func encodeFrame(m guardMsg) ([]byte, error) {
	// Err is a message for people: what is not UTF-8 in it is replaced.
	body, err := json.Marshal(m, jsontext.AllowInvalidUTF8(true))
	if err != nil {
		return nil, err
	}
	if len(body) > maxGuardMsg {
		return nil, errTooLarge(len(body))
	}
	frame := make([]byte, 4, 4+len(body))
	binary.BigEndian.PutUint32(frame, uint32(len(body)))
	return append(frame, body...), nil
}

func errTooLarge(n int) error {
	return fmt.Errorf("launch guard message of %d bytes exceeds %d", n, maxGuardMsg)
}

// readGuardMsg reads one frame; io.EOF means the peer closed between frames.
func readGuardMsg(r io.Reader) (guardMsg, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return guardMsg{}, err
	}
	n := binary.BigEndian.Uint32(head[:])
	if n > maxGuardMsg {
		return guardMsg{}, errTooLarge(int(n))
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return guardMsg{}, err
	}
	var m guardMsg
	if err := json.Unmarshal(body, &m); err != nil {
		return guardMsg{}, fmt.Errorf("malformed launch guard message: %w", err)
	}
	return m, nil
}

// sendFrame writes frame[sent:] to the socket fd, with fds (if any) as
// SCM_RIGHTS on its first byte, and returns how much of frame is sent.
// A non-blocking fd that is full returns unix.EAGAIN.
func sendFrame(fd int, frame []byte, fds []int, sent int) (int, error) {
	for sent < len(frame) {
		var n int
		err := ignoringEINTR(func() (err error) {
			if sent == 0 && len(fds) > 0 {
				n, err = unix.SendmsgN(fd, frame, unix.UnixRights(fds...), nil, 0)
			} else {
				n, err = unix.Write(fd, frame[sent:])
			}
			return err
		})
		if err != nil {
			return sent, err
		}
		sent += n
	}
	return sent, nil
}

// recvFrame reads one frame from the blocking socket fd (the guard's
// side), with the descriptors that came with it. io.EOF means the other
// side closed the socket between frames.
func recvFrame(fd int) (guardMsg, []int, error) {
	r := &rightsReader{fd: fd, oob: make([]byte, unix.CmsgSpace(3*4))}
	m, err := readGuardMsg(r)
	if err != nil {
		closeAllFds(r.fds)
		return guardMsg{}, nil, err
	}
	return m, r.fds, nil
}

// rightsReader reads a socket with recvmsg, keeping the SCM_RIGHTS descriptors.
type rightsReader struct {
	fd  int
	oob []byte
	fds []int
}

func (r *rightsReader) Read(p []byte) (int, error) {
	var n, oobn int
	if err := ignoringEINTR(func() (err error) {
		n, oobn, _, _, err = unix.Recvmsg(r.fd, p, r.oob, unix.MSG_CMSG_CLOEXEC)
		return err
	}); err != nil {
		return 0, err
	}
	if oobn > 0 {
		msgs, err := unix.ParseSocketControlMessage(r.oob[:oobn])
		if err != nil {
			return 0, err
		}
		for i := range msgs {
			if rights, err := unix.ParseUnixRights(&msgs[i]); err == nil {
				r.fds = append(r.fds, rights...)
			}
		}
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func closeAllFds(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
