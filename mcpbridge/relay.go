package mcpbridge

import (
	"context"
	"encoding/hex"
	"encoding/json/v2"
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/safefile"
)

// EnvSession names the environment variable that carries the path of a
// bridge's session file to the bridge program: the one channel every
// agent CLI passes to the MCP servers it starts.
const EnvSession = "CURSORKIT_MCP_BRIDGE"

// bridgeArg is the bridge program's one argument: no user types it.
const bridgeArg = "__cursorkit-mcp-bridge"

// maxSessionFile bounds a session file's size.
const maxSessionFile = 4 << 10

// isBridge reports whether this process was started as a bridge program
// (Bridge.Server's Command and Args, with its Env).
func isBridge(args []string, getenv func(string) string) bool {
	return len(args) == 2 && args[1] == bridgeArg && getenv(EnvSession) != ""
}

// RunIfBridge runs the bridge program and exits when this process is one
// (isBridge), and returns at once otherwise. A program that opens bridges
// calls it first in main; cursorkit's own does.
func RunIfBridge() {
	if !isBridge(os.Args, os.Getenv) {
		return
	}
	if err := relay(context.Background(), os.Stdin, os.Stdout, os.Getenv(EnvSession), os.Getppid()); err != nil {
		fmt.Fprintln(os.Stderr, "cursorkit MCP bridge:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// relay is the bridge program, started by the process parent: it reads
// the session file at path, connects to the embedder, proves the
// session's key and has the embedder prove it, then copies MCP bytes both ways, in from the agent CLI and out to
// it, until either side ends. It never writes to out itself: an error is
// returned, for the program's stderr, and says nothing of the key.
func relay(ctx context.Context, in io.Reader, out io.Writer, path string, parent int) error {
	data, err := safefile.Read(path, maxSessionFile)
	if err != nil {
		return failure.Wrap(failure.Setup, err, "cannot read the bridge's session file")
	}
	var sf sessionFile
	if err := json.Unmarshal(data, &sf); err != nil {
		return failure.New(failure.Setup, "the bridge's session file is not one cursorkit wrote")
	}
	id, err1 := hex.DecodeString(sf.Session)
	key, err2 := hex.DecodeString(sf.Key)
	if err1 != nil || err2 != nil || len(id) != idSize || len(key) != keySize {
		return failure.New(failure.Setup, "the bridge's session file is not one cursorkit wrote")
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, sf.Network, sf.Address)
	if err != nil {
		return failure.Wrap(failure.Process, err, "the embedder that opened this bridge is gone")
	}
	defer conn.Close()
	if err := connect(conn, id, key, parent); errors.Is(err, errNotAdmitted) {
		return failure.Wrap(failure.Auth, err, "the bridge was refused")
	} else if err != nil {
		return failure.Wrap(failure.Auth, err, "the bridge could not authenticate its embedder")
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	// The embedder's end decides: when it closes (the turn ended, or the
	// embedder died and the kernel closed its socket) the bridge exits at
	// once, whatever the CLI still sends.
	go func() {
		_, _ = io.Copy(conn, in)
		closeWrite(conn)
	}()
	_, err = io.Copy(out, conn)
	return err
}

// closeWrite tells the embedder that the CLI closed the bridge's stdin.
func closeWrite(conn net.Conn) {
	if cw, ok := conn.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	conn.Close()
}
