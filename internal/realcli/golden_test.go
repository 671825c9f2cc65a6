package realcli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStabilize(t *testing.T) {
	in := `{"session_id":"3cbe9396-fe68-410b-bdf9-ba41e45dfe5d","uuid":"d813e77d-6a1a-4dbd-a0fe-3c0c380938dd","again":"3cbe9396-fe68-410b-bdf9-ba41e45dfe5d",` +
		`"timestamp":"2026-12-02T13:06:53.731Z","file":"x-2026-12-02T13-41-44-958Z.json","duration_ms":865,"ttft_ms":581.5,"n":865,"retry_delay_ms":522.2012163630533,"again_ms":1000,"durationMs":45}` +
		"\n    localPort: 54354,\n"
	want := `{"session_id":"00000000-0000-4000-8000-000000000001","uuid":"00000000-0000-4000-8000-000000000002","again":"00000000-0000-4000-8000-000000000001",` +
		`"timestamp":"2026-01-01T00:00:00.000Z","file":"x-2026-01-01T00-00-00-000Z.json","duration_ms":0,"ttft_ms":0,"n":865,"retry_delay_ms":0,"again_ms":1000,"durationMs":0}` +
		"\n    localPort: 0,\n"
	assert.Equal(t, want, Stabilize(in))
}

func TestNormalize(t *testing.T) {
	got := Normalize("/tmp/ws/a.txt in /tmp/ws, home /tmp/ws/home", map[string]string{"/tmp/ws": "/workspace", "/tmp/ws/home": "/home/user", "": "x"})
	assert.Equal(t, "/workspace/a.txt in /workspace, home /home/user", got, "the longest first")
}
