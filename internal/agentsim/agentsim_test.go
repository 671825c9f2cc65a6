package agentsim_test

import (
	"bytes"
	"encoding/json/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

var printArgs = []string{"--print", "--output-format", "stream-json", "--trust"}

func TestVersion(t *testing.T) {
	tests := []struct {
		name       string
		env        []string
		wantStdout string
		wantStderr string
		wantCode   int
	}{
		{name: "default build", wantStdout: agentsim.DefaultVersion + "\n"},
		{name: "configured build", env: []string{agentsim.EnvVersion + "=2026.08.11-12-30-05-e8db854"}, wantStdout: "2026.08.11-12-30-05-e8db854\n"},
		{name: "slow but within its delay", env: []string{agentsim.Scenario(agentsim.ScenarioSlowVersion), agentsim.EnvDelay + "=50ms"}, wantStdout: agentsim.DefaultVersion + "\n"},
		{name: "error", env: []string{agentsim.Scenario(agentsim.ScenarioVersionError)}, wantStderr: "Error: ", wantCode: 1},
		{name: "keychain locked", env: []string{agentsim.Scenario(agentsim.ScenarioVersionKeychainLocked)},
			wantStderr: "Error: Your macOS login keychain is locked.\nRun security unlock-keychain and try again.\n", wantCode: 1},
		{name: "IDE missing", env: []string{agentsim.Scenario(agentsim.ScenarioVersionIDEMissing)},
			wantStderr: "Error: No Cursor IDE installation found. Use 'cursor agent' or 'agent' to run the agent.\n", wantCode: 1},
		{name: "status scenarios leave --version alone", env: []string{agentsim.Scenario(agentsim.ScenarioKeychainLocked, agentsim.ScenarioNetworkError)},
			wantStdout: agentsim.DefaultVersion + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runSim(t, tt.env, "", "--version")
			assert.Equal(t, tt.wantCode, code)
			assert.Equal(t, tt.wantStdout, stdout)
			assert.Contains(t, stderr, tt.wantStderr)
		})
	}
}

func TestStatus(t *testing.T) {
	authed := `{"status":"authenticated","isAuthenticated":true,"hasAccessToken":true,"userInfo":{"email":"dev@example.com"}}` + "\n"
	tests := []struct {
		name       string
		scenario   string
		args       []string
		wantStdout string // exact unless empty and wantContains is set
		contains   string
		wantStderr string
		wantCode   int
	}{
		{name: "authenticated", args: []string{"status", "--format", "json"}, wantStdout: authed},
		{name: "whoami alias", args: []string{"whoami", "--format=json"}, wantStdout: authed},
		{name: "text format", args: []string{"status"}, contains: "Logged in as dev@example.com"},
		{name: "unauthenticated", scenario: agentsim.ScenarioUnauthenticated, args: []string{"status", "--format", "json"},
			wantStdout: `{"status":"unauthenticated","isAuthenticated":false,"hasAccessToken":false}` + "\n"},
		{name: "unauthenticated text", scenario: agentsim.ScenarioUnauthenticated, args: []string{"whoami"}, contains: "Not logged in"},
		{name: "keychain locked", scenario: agentsim.ScenarioKeychainLocked, args: []string{"status", "--format", "json"},
			wantStderr: "Error: Your macOS login keychain is locked.\n", wantCode: 1},
		{name: "ide missing", scenario: agentsim.ScenarioIDEMissing, args: []string{"status", "--format", "json"},
			wantStderr: "Error: No Cursor IDE installation found.\n", wantCode: 1},
		{name: "noise around json", scenario: agentsim.ScenarioStatusNoise, args: []string{"status", "--format", "json"}, contains: "\ufeff\x1b[2mChecking authentication…\x1b[0m\n" + authed},
		{name: "malformed", scenario: agentsim.ScenarioStatusMalformed, args: []string{"status", "--format", "json"}, wantStdout: `{"status":"authenticated","isAuthenticated":tr` + "\n"},
		{name: "empty", scenario: agentsim.ScenarioStatusEmpty, args: []string{"status", "--format", "json"}},
		{name: "missing field", scenario: agentsim.ScenarioStatusMissingField, args: []string{"status", "--format", "json"}, wantStdout: `{"status":"authenticated","hasAccessToken":true}` + "\n"},
		{name: "error exit", scenario: agentsim.ScenarioStatusError, args: []string{"status", "--format", "json"}, wantStderr: "Error: getaddrinfo ENOTFOUND api2.cursor.sh\n", wantCode: 1},
		{name: "network error", scenario: agentsim.ScenarioNetworkError, args: []string{"status", "--format", "json"}, wantStderr: "Error: " + agentsim.DefaultNetworkError + "\n", wantCode: 1},
		{name: "logged out offline", scenario: agentsim.ScenarioStatusLoggedOutOffline, args: []string{"status", "--format", "json"},
			wantStdout: `{"status":"unauthenticated","isAuthenticated":false,"hasAccessToken":false}` + "\n",
			wantStderr: "Warning: could not refresh the session: " + agentsim.DefaultNetworkError + "\n"},
		{name: "version scenario leaves status alone", scenario: agentsim.ScenarioSlowVersion, args: []string{"status", "--format", "json"}, wantStdout: authed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runSim(t, []string{agentsim.Scenario(tt.scenario)}, "", tt.args...)
			assert.Equal(t, tt.wantCode, code)
			if tt.contains != "" {
				assert.Contains(t, stdout, tt.contains)
			} else {
				assert.Equal(t, tt.wantStdout, stdout)
			}
			assert.Equal(t, tt.wantStderr, stderr)
		})
	}
}

func TestModels(t *testing.T) {
	var plain strings.Builder
	plain.WriteString("Available models\n\n")
	for _, m := range agentsim.Models() {
		marks := map[[2]bool]string{{true, true}: " (current, default)", {true, false}: " (current)", {false, true}: " (default)"}
		plain.WriteString(m.ID + " - " + m.Label + marks[[2]bool{m.Current, m.Default}] + "\n")
	}
	plain.WriteString("\nTip: use --model <id> to switch.\n")

	t.Run("plain", func(t *testing.T) {
		stdout, stderr, code := runSim(t, nil, "", "models")
		assert.Equal(t, 0, code)
		assert.Equal(t, plain.String(), stdout)
		assert.Empty(t, stderr)
		assert.Contains(t, stdout, "sonnet-4.5 - Claude 4.5 Sonnet (current)\n")
		assert.Contains(t, stdout, "sonnet-4.5-thinking - Claude 4.5 Sonnet (Thinking) (default)\n")
	})
	t.Run("ansi and crlf", func(t *testing.T) {
		stdout, _, code := runSim(t, []string{agentsim.Scenario(agentsim.ScenarioModelsANSI)}, "", "models")
		assert.Equal(t, 0, code)
		assert.True(t, strings.HasPrefix(stdout, "⠋ Loading models…\r\n\x1b[2K\r\x1b[1mAvailable models\x1b[0m\r\n\r\n"), "%q", truncate(stdout))
		assert.NotContains(t, strings.ReplaceAll(stdout, "\r\n", ""), "\n", "every line ends in CRLF")
		assert.Contains(t, stdout, "auto - Auto (duplicate)\r\n")
		assert.True(t, strings.HasSuffix(stdout, "\r\n\x1b[2mTip: use --model <id> to switch.\x1b[0m\r\n"))
		stripped := stripANSI(strings.ReplaceAll(stdout, "\r\n", "\n"))
		for _, m := range agentsim.Models() {
			assert.Contains(t, stripped, "\n"+m.ID+" - "+m.Label)
		}
	})
	t.Run("empty account", func(t *testing.T) {
		stdout, _, code := runSim(t, []string{agentsim.Scenario(agentsim.ScenarioModelsEmpty)}, "", "models")
		assert.Equal(t, 0, code)
		assert.Equal(t, "No models available for this account.\n", stdout)
	})
	t.Run("error", func(t *testing.T) {
		stdout, stderr, code := runSim(t, []string{agentsim.Scenario(agentsim.ScenarioModelsError)}, "", "models")
		assert.Equal(t, 1, code)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, "Failed to fetch models")
	})
	for _, tt := range []struct{ scenario, stderr string }{
		{agentsim.ScenarioKeychainLocked, "Error: Your macOS login keychain is locked.\n"},
		{agentsim.ScenarioIDEMissing, "Error: No Cursor IDE installation found.\n"},
		{agentsim.ScenarioNetworkError, "Error: Failed to fetch models: " + agentsim.DefaultNetworkError + "\n"},
	} {
		t.Run(tt.scenario, func(t *testing.T) {
			stdout, stderr, code := runSim(t, []string{agentsim.Scenario(tt.scenario)}, "", "models")
			assert.Equal(t, 1, code)
			assert.Empty(t, stdout)
			assert.Equal(t, tt.stderr, stderr)
		})
	}
	t.Run("network error of choice", func(t *testing.T) {
		_, stderr, _ := runSim(t, []string{agentsim.Scenario(agentsim.ScenarioNetworkError), agentsim.EnvNetworkError + "=connect ECONNREFUSED 10.0.0.1:443"}, "", "models")
		assert.Equal(t, "Error: Failed to fetch models: connect ECONNREFUSED 10.0.0.1:443\n", stderr)
	})
	t.Run("list-models refused", func(t *testing.T) {
		_, stderr, code := runSim(t, nil, "", "--list-models")
		assert.Equal(t, 1, code)
		assert.Contains(t, stderr, "use 'models'")
	})
}

func sessionOf(t *testing.T, line string) string {
	var e event
	require.NoError(t, json.Unmarshal([]byte(line), &e))
	return e.SessionID
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// TestNormalTurn checks the full shape of a normal turn, as a subprocess.
func TestNormalTurn(t *testing.T) {
	const prompt = "Summarise the README, please.\nSecond line."
	stdout, stderr, code := runSim(t, nil, prompt, append(printArgs, "--model", "gpt-5.1-codex-high", "--mode", "plan")...)
	require.Equal(t, 0, code, stderr)
	assert.True(t, strings.HasSuffix(stdout, "\n"))
	events, nonJSON := decodeLines(t, stdout)
	assert.Empty(t, nonJSON)
	assert.Equal(t, []string{"system/init", "user", "thinking/delta", "thinking/delta", "thinking/completed",
		"assistant", "tool_call/started", "tool_call/completed", "tool_call/started", "tool_call/completed",
		"tool_call/started", "tool_call/completed", "assistant", "result/success"}, types(events))
	session := events[0].SessionID
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$`, session)
	for _, e := range events {
		assert.Equal(t, session, e.SessionID, e.raw)
	}
	assert.Equal(t, "GPT-5.1 Codex High", events[0].Model)
	assert.Contains(t, events[0].raw, `"apiKeySource":"login"`)
	assert.Contains(t, events[0].raw, `"permissionMode":"default"`)
	assert.Equal(t, prompt, events[1].text())
	assert.Equal(t, "Let me look at the README.", events[2].Text+events[3].Text)
	assert.Equal(t, agentsim.TextBeforeTool, events[5].text())
	assert.Equal(t, "mc_1", events[5].ModelCallID)
	assert.NotZero(t, events[5].TimestampMS)
	assert.Equal(t, agentsim.CallIDRead, events[6].CallID)
	assert.Equal(t, agentsim.CallIDRead, events[7].CallID)
	assert.JSONEq(t, `{"readToolCall":{"args":{"path":"README.md"}}}`, string(events[6].ToolCall))
	assert.Contains(t, string(events[7].ToolCall), `"result":{"success":{"content":"# Demo\nhello\n"`)
	assert.Contains(t, string(events[9].ToolCall), `"result":{"failure":`)
	assert.Contains(t, string(events[11].ToolCall), `"result":{"rejected":`)
	assert.Equal(t, agentsim.TextAfterTool, events[12].text())
	last := events[len(events)-1]
	assert.False(t, last.IsError)
	assert.Equal(t, agentsim.TextResult, last.Result)
	assert.Equal(t, map[string]int{"inputTokens": 10, "outputTokens": 20, "cacheReadTokens": 0, "cacheWriteTokens": 0}, last.Usage)
	assert.Contains(t, last.raw, `"duration_ms":1234,"duration_api_ms":1200`)
	assert.Contains(t, last.raw, `"request_id":"req_`)
}

// TestNormalTurnInProcess runs Main directly, the in-process way.
func TestNormalTurnInProcess(t *testing.T) {
	var stdout, stderr bytes.Buffer
	env := map[string]string{}
	code := agentsim.Main(append(printArgs, "--resume", "sess-42"), strings.NewReader("hello"), &stdout, &stderr,
		func(k string) string { return env[k] })
	require.Equal(t, 0, code, stderr.String())
	events, _ := decodeLines(t, stdout.String())
	require.NotEmpty(t, events)
	for _, e := range events {
		assert.Equal(t, "sess-42", e.SessionID)
	}
	assert.Equal(t, "Claude 4.5 Sonnet", events[0].Model, "the current model by default")
}

// TestEncodingIsNodes checks that stream lines are what JSON.stringify
// prints, the echoed prompt standing for any text: no HTML or U+2028
// escapes, and invalid UTF-8 read as U+FFFD.
func TestEncodingIsNodes(t *testing.T) {
	tests := []struct {
		name, prompt, want string
	}{
		{name: "HTML is not escaped", prompt: "<b>a & b</b>", want: "<b>a & b</b>"},
		{name: "line and paragraph separators are not escaped", prompt: "a\u2028b\u2029c", want: "a\u2028b\u2029c"},
		{name: "invalid UTF-8 is U+FFFD", prompt: "a\xffb\xed\xa0\x80c", want: "a\uFFFDb\uFFFD\uFFFD\uFFFDc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := agentsim.Main(printArgs, strings.NewReader(tt.prompt), &stdout, &stderr, func(string) string { return "" })
			require.Equal(t, 0, code, stderr.String())
			events, nonJSON := decodeLines(t, stdout.String())
			require.Empty(t, nonJSON)
			require.Equal(t, "user", events[1].Type)
			assert.Equal(t, tt.want, events[1].text())
			assert.Contains(t, events[1].raw, `"text":"`+tt.want+`"`, "as it is, unescaped")
		})
	}
}

func TestStreamScenarios(t *testing.T) {
	tests := []struct {
		name     string
		env      []string
		args     []string
		wantCode int
		noDecode bool
		check    func(t *testing.T, stdout, stderr string, events []event, nonJSON []string)
	}{
		{name: "resume reuses the session", args: []string{"--resume", "0f9e8d7c-resumed"},
			check: func(t *testing.T, _, _ string, events []event, _ []string) {
				for _, e := range events {
					assert.Equal(t, "0f9e8d7c-resumed", e.SessionID)
				}
			}},
		{name: "duplicate assistant", env: []string{agentsim.Scenario(agentsim.ScenarioDuplicateAssistant)},
			check: func(t *testing.T, _, _ string, events []event, _ []string) {
				var texts, ids []string
				for _, e := range events {
					if e.Type == "assistant" {
						texts = append(texts, e.text())
						ids = append(ids, e.ModelCallID)
					}
				}
				assert.Equal(t, []string{agentsim.TextBeforeTool, agentsim.TextBeforeTool, agentsim.TextAfterTool}, texts)
				assert.Equal(t, []string{"mc_1", "", ""}, ids)
				assert.Equal(t, agentsim.TextResult, events[len(events)-1].Result)
			}},
		{name: "partial output deltas and final copy", args: []string{"--stream-partial-output"},
			check: func(t *testing.T, _, _ string, events []event, _ []string) {
				var deltas, finals string
				for _, e := range events {
					if e.Type != "assistant" {
						continue
					}
					if e.ModelCallID == "" {
						assert.NotZero(t, e.TimestampMS, "a delta carries timestamp_ms")
						deltas += e.text()
					} else {
						assert.Zero(t, e.TimestampMS, "the final copy has no timestamp_ms")
						finals += e.text()
					}
				}
				assert.Equal(t, agentsim.TextResult, deltas)
				assert.Equal(t, agentsim.TextResult, finals)
			}},
		{name: "no result", env: []string{agentsim.Scenario(agentsim.ScenarioNoResult)},
			check: func(t *testing.T, _, _ string, events []event, _ []string) {
				assert.NotContains(t, types(events), "result/success")
				assert.Equal(t, "assistant", events[len(events)-1].Type)
			}},
		{name: "malformed line", env: []string{agentsim.Scenario(agentsim.ScenarioMalformedLine)},
			check: func(t *testing.T, stdout, _ string, events []event, nonJSON []string) {
				require.Len(t, nonJSON, 1)
				assert.True(t, strings.HasPrefix(nonJSON[0], `{"type":"assistant"`))
				lines := strings.Split(stdout, "\n")
				assert.Equal(t, nonJSON[0], lines[2], "after init and user")
				assert.Equal(t, "result", events[len(events)-1].Type)
			}},
		{name: "banner", env: []string{agentsim.Scenario(agentsim.ScenarioBanner)},
			check: func(t *testing.T, stdout, _ string, events []event, nonJSON []string) {
				require.Len(t, nonJSON, 1)
				assert.True(t, strings.HasPrefix(stdout, nonJSON[0]+"\n"))
				assert.Equal(t, "system", events[0].Type)
			}},
		{name: "unknown event", env: []string{agentsim.Scenario(agentsim.ScenarioUnknownEvent)},
			check: func(t *testing.T, _, _ string, events []event, _ []string) {
				assert.Equal(t, "connection/reconnected", types(events)[1])
			}},
		{name: "10 MiB line", env: []string{agentsim.Scenario(agentsim.ScenarioBigLine)}, noDecode: true,
			check: func(t *testing.T, stdout, _ string, _ []event, _ []string) {
				// Decoded only in part: unmarshalling 20 MiB takes seconds under -race.
				lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
				require.Len(t, lines, 7)
				big, result := lines[5], lines[6]
				assert.Greater(t, len(big), agentsim.DefaultLineBytes)
				assert.True(t, strings.HasPrefix(big, `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"abcdefgh`))
				assert.True(t, strings.HasSuffix(big, `"}]},"session_id":"`+sessionOf(t, lines[0])+`","model_call_id":"mc_big","timestamp_ms":`+big[len(big)-14:]))
				prefix := `{"type":"result","subtype":"success","is_error":false,"duration_ms":1234,"duration_api_ms":1200,"result":"`
				require.True(t, strings.HasPrefix(result, prefix))
				text, _, ok := strings.Cut(result[len(prefix):], `"`)
				require.True(t, ok)
				assert.Len(t, text, agentsim.DefaultLineBytes)
				assert.Equal(t, text, big[len(`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"`):][:len(text)])
			}},
		{name: "crlf", env: []string{agentsim.Scenario(agentsim.ScenarioCRLF)},
			check: func(t *testing.T, stdout, _ string, events []event, _ []string) {
				assert.Equal(t, strings.Count(stdout, "\n"), strings.Count(stdout, "\r\n"))
				assert.Equal(t, len(events), strings.Count(stdout, "\r\n"))
				assert.Equal(t, "result", events[len(events)-1].Type)
			}},
		{name: "no final newline", env: []string{agentsim.Scenario(agentsim.ScenarioNoFinalNewline)},
			check: func(t *testing.T, stdout, _ string, events []event, _ []string) {
				assert.True(t, strings.HasSuffix(stdout, "}"))
				assert.Equal(t, "result", events[len(events)-1].Type)
			}},
		{name: "error result", env: []string{agentsim.Scenario(agentsim.ScenarioErrorResult)}, wantCode: 1,
			check: func(t *testing.T, _, _ string, events []event, _ []string) {
				last := events[len(events)-1]
				assert.Equal(t, "result/error", types(events)[len(events)-1])
				assert.True(t, last.IsError)
				assert.Contains(t, last.Result, "Something went wrong")
			}},
		{name: "usage limit", env: []string{agentsim.Scenario(agentsim.ScenarioUsageLimit)}, wantCode: 1,
			check: func(t *testing.T, _, stderr string, events []event, _ []string) {
				last := events[len(events)-1]
				assert.True(t, last.IsError)
				assert.True(t, strings.HasPrefix(last.Result, agentsim.UsageLimitText), last.Result)
				assert.Contains(t, stderr, agentsim.UsageLimitText)
			}},
		{name: "usage limit on stderr only", env: []string{agentsim.Scenario(agentsim.ScenarioUsageLimitStderr)}, wantCode: 1,
			check: func(t *testing.T, stdout, stderr string, _ []event, _ []string) {
				assert.Empty(t, stdout)
				assert.Contains(t, stderr, agentsim.UsageLimitText)
			}},
		{name: "rate limited", env: []string{agentsim.Scenario(agentsim.ScenarioRateLimited)}, wantCode: 1,
			check: func(t *testing.T, _, _ string, events []event, _ []string) {
				assert.Contains(t, events[len(events)-1].Result, "Rate limit")
			}},
		{name: "auth error", env: []string{agentsim.Scenario(agentsim.ScenarioAuthError)}, wantCode: 1,
			check: func(t *testing.T, _, _ string, events []event, _ []string) {
				assert.Contains(t, events[len(events)-1].Result, "Authentication required")
			}},
		{name: "network error result", env: []string{agentsim.Scenario(agentsim.ScenarioNetworkError)}, wantCode: 1,
			check: func(t *testing.T, _, _ string, events []event, _ []string) {
				assert.Equal(t, []string{"system/init", "user", "result/error"}, types(events))
				assert.Equal(t, "Connection error: "+agentsim.DefaultNetworkError, events[len(events)-1].Result)
			}},
		{name: "network error of choice", env: []string{agentsim.Scenario(agentsim.ScenarioNetworkError), agentsim.EnvNetworkError + "=read ECONNRESET"}, wantCode: 1,
			check: func(t *testing.T, _, _ string, events []event, _ []string) {
				assert.Equal(t, "Connection error: read ECONNRESET", events[len(events)-1].Result)
			}},
		{name: "network error on stderr only", env: []string{agentsim.Scenario(agentsim.ScenarioNetworkErrorStderr)}, wantCode: 1, noDecode: true,
			check: func(t *testing.T, stdout, stderr string, _ []event, _ []string) {
				assert.Empty(t, stdout)
				assert.Equal(t, "Error: Connection error: "+agentsim.DefaultNetworkError+"\n", stderr)
			}},
		{name: "keychain locked", env: []string{agentsim.Scenario(agentsim.ScenarioKeychainLocked)}, wantCode: 1, noDecode: true,
			check: func(t *testing.T, stdout, stderr string, _ []event, _ []string) {
				assert.Empty(t, stdout)
				assert.Equal(t, "Error: Your macOS login keychain is locked.\n", stderr)
			}},
		{name: "IDE missing", env: []string{agentsim.Scenario(agentsim.ScenarioIDEMissing)}, wantCode: 1, noDecode: true,
			check: func(t *testing.T, stdout, stderr string, _ []event, _ []string) {
				assert.Empty(t, stdout)
				assert.Equal(t, "Error: No Cursor IDE installation found.\n", stderr)
			}},
		{name: "crash", env: []string{agentsim.Scenario(agentsim.ScenarioCrash)}, wantCode: 2,
			check: func(t *testing.T, _, stderr string, events []event, _ []string) {
				assert.Equal(t, []string{"system/init", "user"}, types(events))
				assert.Contains(t, stderr, "TypeError")
			}},
		{name: "big stream", env: []string{agentsim.Scenario(agentsim.ScenarioBigStream), agentsim.EnvStreamBytes + "=200000", agentsim.EnvChunkBytes + "=100"},
			check: func(t *testing.T, stdout, _ string, events []event, _ []string) {
				assert.GreaterOrEqual(t, len(stdout), 200000)
				seen := map[string]bool{}
				for _, e := range events[2 : len(events)-1] {
					require.Equal(t, "assistant", e.Type)
					assert.Len(t, e.text(), 100)
					assert.False(t, seen[e.text()], "texts are distinct")
					seen[e.text()] = true
				}
				assert.Equal(t, "result/success", types(events)[len(events)-1])
			}},
		{name: "missing init", env: []string{agentsim.Scenario(agentsim.ScenarioMissingInit)},
			check: func(t *testing.T, _, _ string, events []event, _ []string) {
				assert.Equal(t, "user", events[0].Type)
				assert.NotContains(t, types(events), "system/init")
				assert.Equal(t, "result", events[len(events)-1].Type)
			}},
		{name: "no usage", env: []string{agentsim.Scenario(agentsim.ScenarioNoUsage)},
			check: func(t *testing.T, _, _ string, events []event, _ []string) {
				last := events[len(events)-1]
				assert.Equal(t, "result", last.Type)
				assert.NotContains(t, last.raw, "usage")
			}},
		{name: "event after result", env: []string{agentsim.Scenario(agentsim.ScenarioEventAfterResult)},
			check: func(t *testing.T, _, _ string, events []event, _ []string) {
				ts := types(events)
				assert.Equal(t, []string{"result/success", "assistant"}, ts[len(ts)-2:])
			}},
		{name: "partial output with duplicates", env: []string{agentsim.Scenario(agentsim.ScenarioDuplicateAssistant)}, args: []string{"--stream-partial-output"},
			check: func(t *testing.T, _, _ string, events []event, _ []string) {
				var finals []string
				for _, e := range events {
					if e.Type == "assistant" && e.TimestampMS == 0 {
						finals = append(finals, e.text())
						if e.ModelCallID == "" {
							assert.NotContains(t, e.raw, "model_call_id", "no empty model_call_id")
						}
					}
				}
				assert.Equal(t, []string{agentsim.TextBeforeTool, agentsim.TextBeforeTool, agentsim.TextAfterTool}, finals)
			}},
		{name: "event delay paces lines", env: []string{agentsim.EnvEventDelay + "=1ms"},
			check: func(t *testing.T, _, _ string, events []event, _ []string) {
				assert.Equal(t, agentsim.TextResult, events[len(events)-1].Result)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runSim(t, tt.env, "a prompt", append(printArgs, tt.args...)...)
			require.Equal(t, tt.wantCode, code, stderr)
			var events []event
			var nonJSON []string
			if !tt.noDecode {
				events, nonJSON = decodeLines(t, stdout)
			}
			tt.check(t, stdout, stderr, events, nonJSON)
		})
	}
}

func TestPrintRefusals(t *testing.T) {
	tests := []struct {
		name       string
		stdin      string
		args       []string
		wantStderr string
	}{
		{name: "prompt in argv", stdin: "x", args: append(printArgs, "do it"), wantStderr: "stdin"},
		{name: "missing trust", stdin: "x", args: []string{"--print", "--output-format", "stream-json"}, wantStderr: "Workspace Trust Required"},
		{name: "empty prompt", stdin: " \n", args: printArgs, wantStderr: "No prompt provided"},
		{name: "unknown option", stdin: "x", args: append(printArgs, "--yolo"), wantStderr: "unknown option '--yolo'"},
		{name: "bad mode", stdin: "x", args: append(printArgs, "--mode", "agent"), wantStderr: "Allowed choices are plan, ask"},
		{name: "text output", stdin: "x", args: []string{"--print", "--output-format", "text", "--trust"}, wantStderr: "stream-json"},
		{name: "not print", stdin: "x", args: []string{"--output-format", "stream-json", "--trust"}, wantStderr: "--print"},
		{name: "missing value", stdin: "x", args: append(printArgs, "--model"), wantStderr: "argument missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runSim(t, nil, tt.stdin, tt.args...)
			assert.Equal(t, 1, code)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tt.wantStderr)
		})
	}
}

// TestRecord proves what the record holds: the prompt on stdin, nowhere else.
func TestRecord(t *testing.T) {
	const prompt = "secret-prompt-7f3a: refactor the parser"
	record := filepath.Join(testkit.TempDir(t), "record.jsonl")
	env := []string{agentsim.EnvRecord + "=" + record}
	_, _, code := runSim(t, env, "", "--version")
	require.Equal(t, 0, code)
	args := append(printArgs, "--model", "grok", "--force")
	_, stderr, code := runSim(t, env, prompt, args...)
	require.Equal(t, 0, code, stderr)

	records, err := agentsim.ReadRecords(record)
	require.NoError(t, err)
	require.Len(t, records, 2)
	assert.Equal(t, []string{"--version"}, records[0].Args)
	assert.Empty(t, records[0].Stdin)
	assert.Equal(t, args, records[1].Args)
	assert.Equal(t, prompt, records[1].Stdin)
	assert.NotZero(t, records[1].PID)
	assert.NotEmpty(t, records[1].Executable)
	assert.Contains(t, records[1].Env, agentsim.EnvRecord+"="+record)
	for _, a := range records[1].Args {
		assert.NotContains(t, a, "secret-prompt")
	}
	for _, kv := range records[1].Env {
		assert.NotContains(t, kv, "secret-prompt")
	}
	raw, err := json.Marshal(records[1])
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(raw), "secret-prompt"), "only the stdin field holds the prompt")
}

func TestHangBeforeOutput(t *testing.T) {
	record := filepath.Join(testkit.TempDir(t), "record.jsonl")
	p := startSim(t, []string{agentsim.Scenario(agentsim.ScenarioHangBeforeOutput), agentsim.EnvRecord + "=" + record}, "prompt", printArgs...)
	// The record is written once the prompt is read; from then on the
	// simulator blocks without writing.
	require.Eventually(t, func() bool { r, _ := agentsim.ReadRecords(record); return len(r) == 1 }, waitLong, 10*time.Millisecond)
	assert.False(t, p.eofReached())
	p.w.WaitRecorded("main", waitLong)
	p.kill()
	p.waitEOF()
	assert.Empty(t, p.stdout(), "nothing before the hang")
	p.w.RequireGone(waitLong)
}

func TestHangMidStream(t *testing.T) {
	p := startSim(t, []string{agentsim.Scenario(agentsim.ScenarioHangMidStream)}, "prompt", printArgs...)
	out := p.waitOutput(func(out string) bool { return strings.Contains(out, "Working on it") && strings.HasSuffix(out, "\n") }, "the assistant event")
	assert.False(t, p.eofReached())
	p.kill()
	p.waitEOF()
	assert.Equal(t, out, p.stdout(), "nothing after the hang")
	events, _ := decodeLines(t, out)
	assert.Equal(t, []string{"system/init", "user", "assistant"}, types(events))
}

// resultSeen reports whether out holds a complete result line.
func resultSeen(out string) bool {
	i := strings.Index(out, `{"type":"result"`)
	return i >= 0 && strings.Contains(out[i:], "\n")
}

func TestLingerAfterResult(t *testing.T) {
	p := startSim(t, []string{agentsim.Scenario(agentsim.ScenarioLinger)}, "prompt", printArgs...)
	p.waitOutput(resultSeen, "the result")
	main := p.w.WaitRecorded("main", waitLong)
	worker := p.w.WaitRecorded("linger", waitLong)
	alive := p.w.Alive()
	assert.ElementsMatch(t, []testkit.Proc{main, worker}, alive)

	// Killing the main process leaves the worker holding stdout open.
	p.kill()
	assert.False(t, p.eofReached(), "the worker still holds stdout")
	assert.Equal(t, []testkit.Proc{worker}, p.w.Kill())
	p.waitEOF()
	p.w.RequireGone(waitLong)
}

func TestLingerBriefly(t *testing.T) {
	p := startSim(t, []string{agentsim.Scenario(agentsim.ScenarioLinger), agentsim.EnvLinger + "=100ms"}, "prompt", printArgs...)
	p.waitOutput(resultSeen, "the result")
	assert.Equal(t, 0, p.waitExit())
	p.waitEOF()
	p.w.RequireGone(waitLong)
	procs := p.w.Recorded()
	assert.Len(t, procs, 2, "main and its worker")
}

func TestOrphanStdout(t *testing.T) {
	p := startSim(t, []string{agentsim.Scenario(agentsim.ScenarioOrphanStdout)}, "prompt", printArgs...)
	assert.Equal(t, 0, p.waitExit(), "the agent exits at once")
	// The exit can be seen before the reader has drained the pipe.
	p.waitOutput(resultSeen, "the result")
	worker := p.w.WaitRecorded("linger", waitLong)
	assert.False(t, p.eofReached(), "the orphaned worker holds stdout")
	assert.Equal(t, []testkit.Proc{worker}, p.w.Kill())
	p.waitEOF()
}

func TestDoubleFork(t *testing.T) {
	p := startSim(t, []string{agentsim.Scenario(agentsim.ScenarioDoubleFork)}, "prompt", printArgs...)
	p.waitOutput(resultSeen, "the result")
	p.w.WaitRecorded("double-fork-intermediate", waitLong)
	worker := p.w.WaitRecorded("double-fork", waitLong)
	main := p.w.WaitRecorded("main", waitLong)
	alive := p.w.Alive()
	assert.ElementsMatch(t, []testkit.Proc{main, worker}, alive, "the intermediate is gone")
	p.kill()
	assert.False(t, p.eofReached())
	p.w.Kill()
	p.waitEOF()
	p.w.RequireGone(waitLong)
}

func TestEscapeAttempt(t *testing.T) {
	p := startSim(t, []string{agentsim.Scenario(agentsim.ScenarioSetsidEscape)}, "prompt", printArgs...)
	p.waitOutput(resultSeen, "the result")
	p.w.WaitRecorded("escapee", waitLong)
	p.kill()
	assert.False(t, p.eofReached(), "the escapee holds stdout")
	p.w.Kill()
	p.waitEOF()
	p.w.RequireGone(waitLong)
}

func TestDisallowedTool(t *testing.T) {
	tests := []struct {
		name, tool string
		args       []string
	}{
		{name: "shell in plan mode", tool: "shellToolCall", args: []string{"--mode", "plan"}},
		{name: "mcp with force", tool: "mcpToolCall", args: []string{"--force"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startSim(t, []string{agentsim.Scenario(agentsim.ScenarioDisallowedTool)}, "prompt", append(printArgs, tt.args...)...)
			out := p.waitOutput(func(out string) bool { return strings.Contains(out, tt.tool) && strings.HasSuffix(out, "\n") }, "the tool call")
			p.w.WaitRecorded("tool", waitLong)
			events, _ := decodeLines(t, out)
			last := events[len(events)-1]
			assert.Equal(t, "tool_call/started", types(events)[len(events)-1])
			assert.Contains(t, string(last.ToolCall), `"`+tt.tool+`":{"args":`)
			assert.False(t, p.eofReached(), "it waits to be stopped")
			p.kill()
			p.w.Kill()
			p.waitEOF()
			p.w.RequireGone(waitLong)
		})
	}
}

func TestSlowVersionHasAGrandchild(t *testing.T) {
	p := startSim(t, []string{agentsim.Scenario(agentsim.ScenarioSlowVersion)}, "", "--version")
	p.w.WaitRecorded("slow-version", waitLong)
	assert.Empty(t, p.stdout())
	p.kill()
	p.w.Kill()
	p.waitEOF()
	assert.Empty(t, p.stdout())
	p.w.RequireGone(waitLong)
}

func TestEnvStripsSimulatorVariables(t *testing.T) {
	t.Setenv(agentsim.EnvScenario, agentsim.ScenarioCrash)
	env := testkit.ChildEnv(testkit.Simulator, agentsim.Scenario(agentsim.ScenarioBanner))
	var sims []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "CURSORKIT_SIM_") {
			sims = append(sims, kv)
		}
	}
	assert.Equal(t, []string{agentsim.EnvScenario + "=" + agentsim.ScenarioBanner}, sims)
}
