package main

import (
	"os"
	"syscall"
)

// stopSignals are the signals that stop a command: Ctrl-C and Ctrl-Break
// (os.Interrupt), and the console closing, logoff and shutdown, which Go
// delivers as SIGTERM.
func stopSignals() []os.Signal { return []os.Signal{os.Interrupt, syscall.SIGTERM} }

// signalCause says why a signal stopped the command.
func signalCause(sig os.Signal) string {
	if sig == os.Interrupt {
		return "stopped by Ctrl-C"
	}
	return "stopped: the console is closing"
}
