package settingsapi_test

import (
	"context"
	"net/http"

	"github.com/cursorkit/cursorkit/probe"
	"github.com/cursorkit/cursorkit/probe/settingsapi"
)

// An orchestrator mounts the endpoint in its own server; probes stop when
// probeCtx is cancelled.
func ExampleNew() {
	probeCtx, stopProbes := context.WithCancel(context.Background())
	defer stopProbes()
	h, err := settingsapi.New(settingsapi.Options{
		SettingsPath: "/etc/myapp/cursor-settings.json",
		Probe:        probe.Config{CacheDir: "/var/cache/myapp/cursorkit"},
		Token:        "a-long-random-token-from-your-secret-store",
		ProbeContext: probeCtx,
	})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/cursorkit/", http.StripPrefix("/cursorkit", h))
	_ = settingsapi.NewServer(mux) // serve it on a loopback listener
}
