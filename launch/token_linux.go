package launch

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
)

// newLaunchToken returns a fresh random token; crypto/rand never fails.
func newLaunchToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// withLaunchToken returns env with token added to LaunchIDEnv: appended to
// the last existing value (exec keeps the last duplicate), or as a new
// entry. env itself is not modified.
func withLaunchToken(env []string, token string) []string {
	out := make([]string, 0, len(env)+1)
	value := token
	for _, kv := range env {
		if old, ok := strings.CutPrefix(kv, LaunchIDEnv+"="); ok {
			if old != "" {
				value = old + "," + token
			}
			continue
		}
		out = append(out, kv)
	}
	return append(out, LaunchIDEnv+"="+value)
}

// launchTokens returns the tokens in pid's LaunchIDEnv, nil when it has
// none or its environment cannot be read (a zombie's, or one being
// replaced by exec).
func launchTokens(pid int) []string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return nil
	}
	prefix := []byte(LaunchIDEnv + "=")
	var list []byte
	for _, kv := range bytes.Split(data, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, prefix); ok {
			list = v // exec keeps the last duplicate, so the last entry counts
		}
	}
	if len(list) == 0 {
		return nil
	}
	return strings.Split(string(list), ",")
}
