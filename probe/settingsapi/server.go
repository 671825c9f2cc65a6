package settingsapi

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
)

// Server timeouts. WriteTimeout covers the longest request: a models probe
// (5 s by default) or a status probe after a --version probe, plus the wait
// for a coalesced probe, with a wide margin.
const (
	ReadHeaderTimeout = 5 * time.Second
	ReadTimeout       = 15 * time.Second
	WriteTimeout      = 60 * time.Second
	IdleTimeout       = 60 * time.Second
	MaxHeaderBytes    = 16 << 10
)

// NewServer returns an http.Server for h with the timeouts above; the caller
// serves it on a listener (see CheckListenAddr).
func NewServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}

// CheckListenAddr refuses (kind input) an address the endpoint may not
// listen on: unless allowRemote, the host must be a loopback IP literal
// (127.0.0.0/8, ::1) or "localhost"; an empty host (all interfaces) or any
// other name is refused. The port must be present (0 picks a free one).
func CheckListenAddr(addr string, allowRemote bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return failure.New(failure.Input, "--addr %q is not HOST:PORT", detail.Cut(addr, 256))
	}
	if port == "" {
		return failure.New(failure.Input, "--addr %q has no port", detail.Cut(addr, 256))
	}
	if allowRemote || isLoopbackHost(host) {
		return nil
	}
	return failure.New(failure.Input, "--addr %q is not a loopback address; the settings endpoint listens on loopback only unless --allow-remote is given", detail.Cut(addr, 256))
}

// CheckListener verifies the address actually bound is loopback, catching a
// "localhost" that resolved elsewhere. allowRemote accepts anything.
func CheckListener(ln net.Listener, allowRemote bool) error {
	if allowRemote {
		return nil
	}
	tcp, ok := ln.Addr().(*net.TCPAddr)
	if !ok || !tcp.IP.IsLoopback() {
		return failure.New(failure.Input, "the listener's address %s is not loopback", ln.Addr())
	}
	return nil
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}
