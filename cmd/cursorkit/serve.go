package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/probe"
	"github.com/cursorkit/cursorkit/probe/settingsapi"
)

const serveUsage = "serve [--addr HOST:PORT] [--token-file FILE] [--allow-remote]"

// defaultServeAddr is where `cursorkit serve` listens without --addr.
const defaultServeAddr = "127.0.0.1:7878"

// tokenFileName is the default token file, beside the settings file.
const tokenFileName = "serve-token"

// serveConfig is what `cursorkit serve` needs besides its flags; tests
// give the probes the simulator's environment and shorten the grace.
type serveConfig struct {
	// probe configures the endpoint's probes (its Override is the saved
	// path, set per request).
	probe probe.Config
	// grace is how long shutdown waits for in-flight requests before it
	// stops their probes (and the probes' process trees).
	grace time.Duration
	// stopWait is how long it then waits for the stopped probes'
	// requests to answer; zero means shutdownStopWait.
	stopWait time.Duration
}

// shutdownStopWait bounds the wait for requests whose probes were stopped:
// stopping a tree is bounded well within it (docs/contract.md "Defaults").
const shutdownStopWait = 10 * time.Second

func runServe(ctx context.Context, a *app, args []string) int {
	return a.serve(ctx, args, serveConfig{grace: 10 * time.Second})
}

// serve runs the settings validation endpoint until ctx ends (SIGINT or
// SIGTERM), then shuts down gracefully: no new connections, in-flight
// requests get cfg.grace to finish, then in-flight probes are cancelled
// (their process trees stopped) and the remaining connections closed.
func (a *app) serve(ctx context.Context, args []string, cfg serveConfig) int {
	fs := newFlags("serve")
	addr := fs.String("addr", defaultServeAddr, "listen address HOST:PORT; loopback only unless --allow-remote")
	tokenFile := fs.String("token-file", "", "bearer token file, created 0600 with a random token when absent (default: $CURSORKIT_TOKEN, else "+tokenFileName+" beside the settings file)")
	allowRemote := fs.Bool("allow-remote", false, "allow a non-loopback --addr; requires --token-file")
	if code, ok := a.parseFlags(fs, serveUsage, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return a.fail(false, failure.New(failure.Input, "serve takes no arguments; usage: cursorkit %s", serveUsage))
	}
	if a.binarySet {
		return a.fail(false, failure.New(failure.Input, "--binary does not apply to serve: the endpoint reports on the binary saved in the settings file"))
	}
	if *allowRemote && !fs.Changed("token-file") {
		return a.fail(false, failure.New(failure.Input, "--allow-remote requires --token-file"))
	}
	if err := settingsapi.CheckListenAddr(*addr, *allowRemote); err != nil {
		return a.fail(false, err)
	}
	token, where, err := a.serveToken(*tokenFile, fs.Changed("token-file"))
	if err != nil {
		return a.fail(false, err)
	}

	// Probes outlive the signal by the grace period, then stop.
	probeCtx, stopProbes := context.WithCancel(context.WithoutCancel(ctx))
	defer stopProbes()
	h, err := settingsapi.New(settingsapi.Options{
		SettingsPath: a.settingsPath,
		Probe:        cfg.probe,
		Token:        token,
		ProbeContext: probeCtx,
	})
	if err != nil {
		return a.fail(false, err)
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return a.fail(false, failure.Wrap(failure.Setup, err, "listening on %s", *addr))
	}
	if err := settingsapi.CheckListener(ln, *allowRemote); err != nil {
		ln.Close()
		return a.fail(false, err)
	}
	srv := settingsapi.NewServer(h)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(a.stderr, "cursorkit serve: listening on http://%s (bearer token %s; settings %s)\n", ln.Addr(), where, a.settingsPath)

	select {
	case err := <-served:
		return a.fail(false, failure.Wrap(failure.Setup, err, "serving on %s", ln.Addr()))
	case <-ctx.Done():
	}
	fmt.Fprintln(a.stderr, "cursorkit serve: shutting down")
	stopWait := cfg.stopWait
	if stopWait == 0 {
		stopWait = shutdownStopWait
	}
	if err := shutdown(srv, stopProbes, cfg.grace, stopWait); err != nil {
		return a.fail(false, err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return a.fail(false, failure.Wrap(failure.Setup, err, "serving on %s", ln.Addr()))
	}
	return failure.ExitOK
}

// shutdown stops srv: it waits up to grace for in-flight requests, then
// cancels the probes they wait on (the probes stop their process trees and
// the handlers answer 503) and waits up to stopWait before closing the
// connections that are left.
func shutdown(srv *http.Server, stopProbes context.CancelFunc, grace, stopWait time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	err := srv.Shutdown(ctx)
	cancel()
	if err == nil {
		return nil
	}
	stopProbes()
	ctx, cancel = context.WithTimeout(context.Background(), stopWait)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		_ = srv.Close() // the error that matters is that requests outlived the grace
		return failure.New(failure.Timeout, "requests still running %s after their probes were stopped; connections closed", stopWait)
	}
	return nil
}

// serveToken returns the bearer token and a description of where it is
// kept, never the token itself: --token-file when given, else
// CURSORKIT_TOKEN, else the default token file beside the settings file,
// which is refused when the settings file is the current directory's
// fallback (no user config directory): a token file must not land
// wherever serve happened to start.
func (a *app) serveToken(tokenFile string, fileGiven bool) (token, where string, err error) {
	if !fileGiven {
		if env := strings.TrimSpace(a.getenv("CURSORKIT_TOKEN")); env != "" {
			if err := settingsapi.ValidateToken(env); err != nil {
				return "", "", failure.Wrap(failure.Setup, err, "CURSORKIT_TOKEN")
			}
			return env, "from CURSORKIT_TOKEN", nil
		}
		if a.settingsInCwd {
			return "", "", failure.New(failure.Setup, "there is no user config directory (HOME, or AppData on Windows, is not set) to keep the bearer token in, and serve does not write it into the current directory; pass --token-file FILE or set CURSORKIT_TOKEN")
		}
		tokenFile = filepath.Join(filepath.Dir(a.settingsPath), tokenFileName)
	}
	token, created, err := settingsapi.LoadOrCreateTokenFile(tokenFile)
	if err != nil {
		return "", "", err
	}
	if created {
		return token, "in " + tokenFile + ", created now", nil
	}
	return token, "in " + tokenFile, nil
}
