//go:build unix

package main

import (
	"os"
	"syscall"
)

// stopSignals are the signals that stop a command: an interrupt, a polite
// termination, the terminal or SSH session going away, a quit, and a
// closed stdout.
func stopSignals() []os.Signal {
	return []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE}
}

// signalCause says why a signal stopped the command.
func signalCause(sig os.Signal) string {
	switch sig {
	case syscall.SIGPIPE:
		return "stdout was closed (SIGPIPE)"
	case syscall.SIGHUP:
		return "the terminal went away (SIGHUP)"
	}
	if s, ok := sig.(syscall.Signal); ok {
		return "stopped by " + sigName(s)
	}
	return "stopped by " + sig.String()
}

// sigName is the conventional name of the stop signals.
func sigName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	}
	return s.String()
}
