package launch

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cursorkit/cursorkit/failure"
)

// The launch guard (docs/architecture.md "The launch guard") is this very
// binary, executed again as guardName with guardEnv set to guardProtocol,
// which the package's init recognises. It talks to the program that
// started it over a stream socket on guardFD, in frames of a 4-byte
// big-endian length and a JSON guardMsg; a spawn request carries the
// child's stdin, stdout and stderr as SCM_RIGHTS on its first byte.
const (
	guardName     = "cursorkit-launch-guard"
	guardEnv      = "CURSORKIT_LAUNCH_GUARD"
	guardProtocol = "1"
	guardFD       = 3
	// maxGuardMsg bounds one message: a spawn request carries the child's
	// whole environment and argv, which execve itself caps at a few MiB.
	maxGuardMsg = 16 << 20
)

// Operations of guardMsg.Op. The guard first says opReady. Then, for each
// child (ID), the host sends opSpawn, answered by opStarted or opFailed;
// opTerminate and opKill, each answered before the next request for that
// child is sent; and at last opClose, answered by opClosed, after which the
// ID is forgotten. The guard reports the child's exit once, with opExited,
// whenever it happens. When the host's end of the socket closes, the guard
// kills every tree it holds and exits.
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

// guardMsg is one message between a host and its guard; Op says which
// fields it uses.
type guardMsg struct {
	Op string `json:"op"`
	// ID names the child a message is about (not opReady).
	ID uint64 `json:"id,omitempty"`
	// opSpawn: the child to start, and the launch token in its Env.
	Path  string   `json:"path,omitempty"`
	Args  []string `json:"args,omitempty"`
	Env   []string `json:"env,omitempty"`
	Dir   string   `json:"dir,omitempty"`
	Token string   `json:"token,omitempty"`
	// opStarted: the child's identity, and what the guard gave up on.
	// opReady: the guard's own.
	Pid       int               `json:"pid,omitempty"`
	StartTime uint64            `json:"startTime,omitempty"`
	Warnings  []failure.Warning `json:"warnings,omitempty"`
	// opFailed: the errno of the failed fork or exec.
	Errno int `json:"errno,omitempty"`
	// opExited: how the child ended.
	Status *ExitStatus `json:"status,omitempty"`
	// opKilled, opClosed: what the kill did.
	Report *KillReport `json:"report,omitempty"`
	// opTerminated: nothing was left to signal.
	Done bool `json:"done,omitempty"`
	// Err is a failure the guard met while answering.
	Err string `json:"err,omitempty"`
}

// encodeFrame returns m as one frame.
func encodeFrame(m guardMsg) ([]byte, error) {
	body, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if len(body) > maxGuardMsg {
		return nil, fmt.Errorf("launch guard message of %d bytes exceeds %d", len(body), maxGuardMsg)
	}
	frame := make([]byte, 4, 4+len(body))
	binary.BigEndian.PutUint32(frame, uint32(len(body)))
	return append(frame, body...), nil
}

// decodeBody decodes a frame's body.
func decodeBody(body []byte) (guardMsg, error) {
	var m guardMsg
	if err := json.Unmarshal(body, &m); err != nil {
		return guardMsg{}, fmt.Errorf("malformed launch guard message: %w", err)
	}
	return m, nil
}

// readGuardMsg reads one frame from r (the host's side, which receives no
// descriptors). io.EOF means the other side closed the socket between
// frames.
func readGuardMsg(r io.Reader) (guardMsg, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return guardMsg{}, err
	}
	n := binary.BigEndian.Uint32(head[:])
	if n > maxGuardMsg {
		return guardMsg{}, fmt.Errorf("launch guard message of %d bytes exceeds %d", n, maxGuardMsg)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return guardMsg{}, err
	}
	return decodeBody(body)
}

// sendFrame writes frame to the blocking socket fd, with fds (if any) as
// SCM_RIGHTS on its first byte.
func sendFrame(fd int, frame []byte, fds []int) error {
	sent := 0
	for sent < len(frame) {
		var n int
		var err error
		if sent == 0 && len(fds) > 0 {
			n, err = unix.SendmsgN(fd, frame, unix.UnixRights(fds...), nil, 0)
		} else {
			n, err = unix.Write(fd, frame[sent:])
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		sent += n
	}
	return nil
}

// recvFrame reads one frame from the blocking socket fd (the guard's
// side), with the descriptors that came with it. io.EOF means the other
// side closed the socket between frames.
func recvFrame(fd int) (guardMsg, []int, error) {
	var head [4]byte
	var fds []int
	oob := make([]byte, unix.CmsgSpace(3*4))
	got := 0
	for got < len(head) {
		n, oobn, _, _, err := unix.Recvmsg(fd, head[got:], oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			closeAllFds(fds)
			return guardMsg{}, nil, err
		}
		if oobn > 0 {
			rights, perr := parseRights(oob[:oobn])
			fds = append(fds, rights...)
			if perr != nil {
				closeAllFds(fds)
				return guardMsg{}, nil, perr
			}
		}
		if n == 0 {
			closeAllFds(fds)
			if got == 0 {
				return guardMsg{}, nil, io.EOF
			}
			return guardMsg{}, nil, io.ErrUnexpectedEOF
		}
		got += n
	}
	size := binary.BigEndian.Uint32(head[:])
	if size > maxGuardMsg {
		closeAllFds(fds)
		return guardMsg{}, nil, fmt.Errorf("launch guard message of %d bytes exceeds %d", size, maxGuardMsg)
	}
	body := make([]byte, size)
	for got := 0; got < len(body); {
		n, err := unix.Read(fd, body[got:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			closeAllFds(fds)
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return guardMsg{}, nil, err
		}
		got += n
	}
	m, err := decodeBody(body)
	if err != nil {
		closeAllFds(fds)
		return guardMsg{}, nil, err
	}
	return m, fds, nil
}

// parseRights returns the descriptors of SCM_RIGHTS control messages.
func parseRights(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	for i := range msgs {
		rights, err := unix.ParseUnixRights(&msgs[i])
		if err != nil {
			continue
		}
		fds = append(fds, rights...)
	}
	return fds, nil
}

func closeAllFds(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// errnoOf returns the errno inside err, or EIO.
func errnoOf(err error) syscall.Errno {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return syscall.EIO
}
