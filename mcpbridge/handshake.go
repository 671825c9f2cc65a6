package mcpbridge

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"time"

	"github.com/cursorkit/cursorkit/failure"
)

// The handshake that opens every connection from a bridge program to its
// embedder, before any MCP byte. Both ends prove they hold the session's
// key without sending it: each answers the other's fresh nonce with an
// HMAC-SHA256 of both nonces, so a recorded handshake replays nowhere and
// a program squatting on the address learns nothing.
//
//	bridge → embedder: magic, session id, bridge nonce, the bridge's parent PID
//	embedder → bridge: embedder nonce, HMAC(key, "embedder" session bn en)
//	bridge → embedder: HMAC(key, "bridge" session bn en parent)
//	embedder → bridge: accepted
//
// The parent PID, covered by the bridge's proof, is the process that
// started the bridge program: the embedder admits only a bridge its turn's
// agent started (Bridge.Admit).
const (
	magic        = "ckbridge"
	idSize       = 16
	keySize      = 32
	nonceSize    = 32
	pidSize      = 8
	macSize      = sha256.Size
	acceptedByte = 0x01
)

// handshakeTimeout bounds a handshake from either end.
const handshakeTimeout = 5 * time.Second

// RefusedError is the failure.Auth error of a connection the embedder
// refused: Reason says why, never with the key or a nonce.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string {
	return "a connection to the MCP bridge was refused: the connection " + e.Reason
}

// Unwrap makes a refusal a failure.Auth error.
func (e *RefusedError) Unwrap() error { return &failure.Error{Kind: failure.Auth} }

func mac(key []byte, role string, id, bridgeNonce, embedderNonce []byte, more ...[]byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(role))
	h.Write(id)
	h.Write(bridgeNonce)
	h.Write(embedderNonce)
	for _, m := range more {
		h.Write(m)
	}
	return h.Sum(nil)
}

// accept runs the embedder's side on conn for session id and key, up to
// the accepted byte, which admit decides on from the bridge's parent PID.
func accept(conn net.Conn, id, key []byte, admit func(parent int) error) error {
	_ = conn.SetDeadline(time.Now().Add(handshakeTimeout))
	defer conn.SetDeadline(time.Time{})
	hello := make([]byte, len(magic)+idSize+nonceSize+pidSize)
	if _, err := io.ReadFull(conn, hello); err != nil {
		return &RefusedError{Reason: "did not open with a bridge's handshake"}
	}
	if string(hello[:len(magic)]) != magic {
		return &RefusedError{Reason: "did not open with a bridge's handshake"}
	}
	if !hmac.Equal(hello[len(magic):len(magic)+idSize], id) {
		return &RefusedError{Reason: "named another session"}
	}
	bridgeNonce := hello[len(magic)+idSize : len(magic)+idSize+nonceSize]
	parent := hello[len(magic)+idSize+nonceSize:]
	en := make([]byte, nonceSize)
	rand.Read(en)
	if _, err := conn.Write(append(en, mac(key, "embedder", id, bridgeNonce, en)...)); err != nil {
		return &RefusedError{Reason: "went away during the handshake"}
	}
	proof := make([]byte, macSize)
	if _, err := io.ReadFull(conn, proof); err != nil {
		return &RefusedError{Reason: "went away during the handshake"}
	}
	if !hmac.Equal(proof, mac(key, "bridge", id, bridgeNonce, en, parent)) {
		return &RefusedError{Reason: "did not prove the session's key"}
	}
	if err := admit(int(binary.BigEndian.Uint64(parent))); err != nil {
		return err
	}
	_ = conn.SetDeadline(time.Now().Add(handshakeTimeout))
	if _, err := conn.Write([]byte{acceptedByte}); err != nil {
		return &RefusedError{Reason: "went away during the handshake"}
	}
	return nil
}

// errNotEmbedder is a peer that could not prove the session's key.
var errNotEmbedder = errors.New("the peer at the session's address did not prove the session's key")

// connect runs the bridge's side on conn for session id and key, as a
// bridge program whose parent is the process parent.
func connect(conn net.Conn, id, key []byte, parent int) error {
	// The embedder may wait for its agent's PID before it answers the
	// proof (Bridge.Admit): the deadline covers that wait too.
	_ = conn.SetDeadline(time.Now().Add(2 * handshakeTimeout))
	defer conn.SetDeadline(time.Time{})
	bn := make([]byte, nonceSize)
	rand.Read(bn)
	pp := binary.BigEndian.AppendUint64(nil, uint64(parent))
	hello := append(append(append([]byte(magic), id...), bn...), pp...)
	if _, err := conn.Write(hello); err != nil {
		return err
	}
	answer := make([]byte, nonceSize+macSize)
	if _, err := io.ReadFull(conn, answer); err != nil {
		return errNotEmbedder
	}
	en, proof := answer[:nonceSize], answer[nonceSize:]
	if !hmac.Equal(proof, mac(key, "embedder", id, bn, en)) {
		return errNotEmbedder
	}
	if _, err := conn.Write(mac(key, "bridge", id, bn, en, pp)); err != nil {
		return err
	}
	ok := make([]byte, 1)
	if _, err := io.ReadFull(conn, ok); err != nil || ok[0] != acceptedByte {
		return errNotAdmitted
	}
	return nil
}

// errNotAdmitted is an embedder that proved the key but did not admit this
// bridge: the process that started it is not the turn's agent.
var errNotAdmitted = errors.New("the embedder did not admit this bridge: the process that started it is not the turn's agent")
