//go:build unix

package jobs

import (
	"os"
	"syscall"
)

// stopSignal is the polite stop Cancel sends a worker.
func stopSignal() os.Signal { return syscall.SIGTERM }
