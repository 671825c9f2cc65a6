package jobs

import "os"

// stopSignal is what Cancel sends a worker: Windows has no polite stop for
// a detached process, so it is killed (its kill-on-close Job Object takes
// the agent's tree with it).
func stopSignal() os.Signal { return os.Kill }
