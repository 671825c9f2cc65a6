package mcpbridge

import (
	"context"
	"encoding/hex"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/procid"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// objectSchema is the smallest input schema a tool may have.
var objectSchema = jsontext.Value(`{"type":"object","properties":{"word":{"type":"string"}}}`)

func echoTool(name string) Tool {
	return Tool{Name: name, Description: "echoes its input", InputSchema: objectSchema,
		Handle: func(_ context.Context, input jsontext.Value) (string, error) {
			return name + ":" + string(input), nil
		}}
}

// refusals collects what a bridge refused.
type refusals struct {
	mu   sync.Mutex
	errs []error
	seen chan struct{}
}

func newRefusals() *refusals { return &refusals{seen: make(chan struct{}, 100)} }

func (r *refusals) add(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
	r.seen <- struct{}{}
}

// next waits for the next refusal.
func (r *refusals) next(t *testing.T) error {
	t.Helper()
	select {
	case <-r.seen:
	case <-time.After(10 * time.Second):
		t.Fatal("no refusal was reported")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errs[len(r.errs)-1]
}

// open opens a bridge for a bridge program run in this process
// (connectClient), which says this process started it.
func open(t *testing.T, tools []Tool, opts Options) *Bridge {
	t.Helper()
	b := openUnadmitted(t, tools, opts)
	b.Admit(os.Getpid())
	return b
}

func openUnadmitted(t *testing.T, tools []Tool, opts Options) *Bridge {
	t.Helper()
	b, err := Open(context.Background(), tools, opts)
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b
}

// relayed is an MCP client session over Relay run in this process, as the
// bridge program would run it for a CLI.
type relayed struct {
	*mcp.ClientSession
	relayDone chan error
}

func connectClient(t *testing.T, sessionPath string) *relayed {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := relay(ctx, inR, outW, sessionPath, os.Getpid())
		outW.CloseWithError(io.EOF)
		inR.Close()
		done <- err
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return &relayed{ClientSession: cs, relayDone: done}
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) (text string, isError bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	require.Len(t, res.Content, 1)
	tc, ok := res.Content[0].(*mcp.TextContent)
	require.True(t, ok, "the result is text")
	return tc.Text, res.IsError
}

func TestTheAgentSeesExactlyTheToolsAndTheirHandlersAnswer(t *testing.T) {
	var got jsontext.Value
	lookup := Tool{Name: "lookup_word", Description: "defines a word", InputSchema: objectSchema,
		Handle: func(_ context.Context, input jsontext.Value) (string, error) {
			got = input.Clone()
			return "a small domesticated carnivore", nil
		}}
	b := open(t, []Tool{lookup, echoTool("echo")}, Options{})
	cs := connectClient(t, b.Server().Env[EnvSession])

	assert.Equal(t, []string{"fn_echo", "fn_lookup_word"}, toolNames(t, cs.ClientSession))
	text, isError := call(t, cs.ClientSession, "fn_lookup_word", map[string]any{"word": "cat"})
	assert.False(t, isError)
	assert.Equal(t, "a small domesticated carnivore", text)
	assert.JSONEq(t, `{"word":"cat"}`, string(got))
}

func TestAFailingHandlerIsAToolErrorAndTheSessionGoesOn(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	tools := []Tool{
		{Name: "fails", InputSchema: objectSchema, Handle: func(context.Context, jsontext.Value) (string, error) {
			return "", errors.New("no such word")
		}},
		{Name: "panics", InputSchema: objectSchema, Handle: func(context.Context, jsontext.Value) (string, error) {
			panic("boom")
		}},
		{Name: "ignores_its_deadline", InputSchema: objectSchema, Timeout: 50 * time.Millisecond,
			Handle: func(context.Context, jsontext.Value) (string, error) {
				<-release
				return "too late", nil
			}},
		{Name: "honours_its_deadline", InputSchema: objectSchema, Timeout: 50 * time.Millisecond,
			Handle: func(ctx context.Context, _ jsontext.Value) (string, error) {
				<-ctx.Done()
				return "", ctx.Err()
			}},
		echoTool("echo"),
	}
	b := open(t, tools, Options{})
	cs := connectClient(t, b.Server().Env[EnvSession])
	for _, tc := range []struct{ tool, want string }{
		{"fn_fails", "no such word"},
		{"fn_panics", "tool panics failed: its handler panicked"},
		{"fn_ignores_its_deadline", "tool ignores_its_deadline did not answer within 50ms"},
		{"fn_honours_its_deadline", "tool honours_its_deadline did not answer within 50ms"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			text, isError := call(t, cs.ClientSession, tc.tool, map[string]any{})
			assert.True(t, isError)
			assert.Equal(t, tc.want, text)
			text, isError = call(t, cs.ClientSession, "fn_echo", map[string]any{"word": "after"})
			assert.False(t, isError, "the session goes on")
			assert.Equal(t, `echo:{"word":"after"}`, text)
		})
	}
}

func TestACallOfAToolTheBridgeDoesNotPublishIsRefusedAndReported(t *testing.T) {
	r := newRefusals()
	b := open(t, []Tool{echoTool("echo")}, Options{OnRefused: r.add})
	cs := connectClient(t, b.Server().Env[EnvSession])
	for _, name := range []string{"fn_other", "echo", "mcp__cursorkit__fn_echo", "fn_echo "} {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err == nil {
			t.Fatalf("a call of %q was answered", name)
		}
		refused := r.next(t)
		assert.Equal(t, failure.Policy, failure.KindOf(refused))
		assert.Contains(t, refused.Error(), "does not publish")
		assertNoSecret(t, b, refused.Error())
	}
}

// sessionOf reads a bridge's session file.
func sessionOf(t *testing.T, b *Bridge) sessionFile {
	t.Helper()
	data, err := os.ReadFile(b.Server().Env[EnvSession])
	require.NoError(t, err)
	var sf sessionFile
	require.NoError(t, json.Unmarshal(data, &sf))
	return sf
}

func assertNoSecret(t *testing.T, b *Bridge, s string) {
	t.Helper()
	assert.NotContains(t, s, hex.EncodeToString(b.key))
	assert.NotContains(t, s, string(b.key))
}

// recordingConn keeps what was written through it.
type recordingConn struct {
	net.Conn
	written [][]byte
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.written = append(c.written, slices.Clone(p))
	return c.Conn.Write(p)
}

func dial(t *testing.T, sf sessionFile) net.Conn {
	t.Helper()
	conn, err := net.Dial(sf.Network, sf.Address)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

// assertClosed checks that the embedder closed conn without another byte.
func assertClosed(t *testing.T, conn net.Conn) {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	n, err := conn.Read(make([]byte, 64))
	assert.Zero(t, n)
	assert.Error(t, err)
	var ne net.Error
	if errors.As(err, &ne) {
		assert.False(t, ne.Timeout(), "the embedder did not close the connection")
	}
}

func TestTheEmbedderRefusesEveryConnectionThatDoesNotProveTheSessionKey(t *testing.T) {
	r := newRefusals()
	b := open(t, []Tool{echoTool("echo")}, Options{OnRefused: r.add})
	other := open(t, []Tool{echoTool("echo")}, Options{})
	sf := sessionOf(t, b)
	id, _ := hex.DecodeString(sf.Session)
	key, _ := hex.DecodeString(sf.Key)

	// A recorded handshake of a bridge that was let in.
	rec := &recordingConn{Conn: dial(t, sf)}
	require.NoError(t, connect(rec, id, key, os.Getpid()))
	require.Len(t, rec.written, 2, "hello and proof")

	wrongKey := slices.Clone(key)
	wrongKey[0] ^= 1
	otherID, _ := hex.DecodeString(sessionOf(t, other).Session)
	otherKey, _ := hex.DecodeString(sessionOf(t, other).Key)

	for _, tc := range []struct {
		name, reason string
		try          func(conn net.Conn)
	}{
		{"not a bridge", "did not open with a bridge's handshake", func(conn net.Conn) {
			conn.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}` + "\n"))
		}},
		{"another session's bridge", "named another session", func(conn net.Conn) {
			assert.Error(t, connect(conn, otherID, otherKey, os.Getpid()))
		}},
		{"the right session, a wrong key", "did not prove the session's key", func(conn net.Conn) {
			bn := make([]byte, nonceSize)
			conn.Write(append(append([]byte(magic), id...), append(bn, make([]byte, pidSize)...)...))
			answer := make([]byte, nonceSize+macSize)
			_, err := io.ReadFull(conn, answer)
			require.NoError(t, err)
			conn.Write(mac(wrongKey, "bridge", id, bn, answer[:nonceSize], make([]byte, pidSize)))
		}},
		{"a replayed handshake", "did not prove the session's key", func(conn net.Conn) {
			conn.Write(rec.written[0])
			_, err := io.ReadFull(conn, make([]byte, nonceSize+macSize))
			require.NoError(t, err)
			conn.Write(rec.written[1])
		}},
		{"silence", "did not open with a bridge's handshake", func(conn net.Conn) {
			conn.(interface{ CloseWrite() error }).CloseWrite()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := dial(t, sf)
			tc.try(conn)
			refused := r.next(t)
			var re *RefusedError
			require.ErrorAs(t, refused, &re)
			assert.Equal(t, tc.reason, re.Reason)
			assert.Equal(t, failure.Auth, failure.KindOf(refused))
			assertNoSecret(t, b, refused.Error())
			assertClosed(t, conn)
		})
	}
}

func TestTheBridgeProgramRefusesAnEmbedderThatCannotProveTheKey(t *testing.T) {
	b := open(t, []Tool{echoTool("echo")}, Options{})
	sf := sessionOf(t, b)
	// A squatter on another address, and a session file sending the
	// bridge there with this session's id and key.
	squatter, err := net.Listen(sf.Network, filepath.Join(testkit.TempDir(t), "s"))
	if runtime.GOOS == "windows" {
		squatter, err = net.Listen("tcp", "127.0.0.1:0")
	}
	require.NoError(t, err)
	defer squatter.Close()
	go func() {
		conn, err := squatter.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		io.ReadFull(conn, make([]byte, len(magic)+idSize+nonceSize+pidSize))
		conn.Write(make([]byte, nonceSize+macSize)) // no proof it can make
		io.Copy(io.Discard, conn)
	}()
	sf.Network, sf.Address = squatter.Addr().Network(), squatter.Addr().String()
	data, err := json.Marshal(sf)
	require.NoError(t, err)
	path := filepath.Join(testkit.TempDir(t), "session.json")
	require.NoError(t, os.WriteFile(path, data, 0o600))

	in, out := &blockingReader{}, &recordingWriter{}
	err = relay(context.Background(), in, out, path, os.Getpid())
	require.Error(t, err)
	assert.Equal(t, failure.Auth, failure.KindOf(err))
	assert.Empty(t, out.data, "the bridge wrote nothing to the CLI")
	assertNoSecret(t, b, err.Error())
}

// bounded is a context that ends a relay the embedder let in by mistake.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

type blockingReader struct{}

func (blockingReader) Read([]byte) (int, error) { select {} }

type recordingWriter struct{ data []byte }

func (w *recordingWriter) Write(p []byte) (int, error) {
	w.data = append(w.data, p...)
	return len(p), nil
}

func TestABadSessionFileIsASetupError(t *testing.T) {
	dir := testkit.TempDir(t)
	for _, tc := range []struct{ name, content string }{
		{"not JSON", "not json"},
		{"a short key", `{"network":"unix","address":"x","session":"00","key":"00"}`},
		{"not hex", `{"network":"unix","address":"x","session":"zz","key":"zz"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "session.json")
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o600))
			err := relay(context.Background(), blockingReader{}, io.Discard, path, os.Getpid())
			assert.Equal(t, failure.Setup, failure.KindOf(err))
		})
	}
	err := relay(context.Background(), blockingReader{}, io.Discard, filepath.Join(dir, "missing"), os.Getpid())
	assert.Equal(t, failure.Setup, failure.KindOf(err))
}

func TestFiftySessionsEachSeeOnlyTheirOwnTools(t *testing.T) {
	const sessions = 50
	bridges := make([]*Bridge, sessions)
	for i := range bridges {
		bridges[i] = open(t, []Tool{echoTool(fmt.Sprintf("tool_%d", i))}, Options{})
	}
	var wg sync.WaitGroup
	for i, b := range bridges {
		wg.Go(func() {
			cs := connectClient(t, b.Server().Env[EnvSession])
			assert.Equal(t, []string{fmt.Sprintf("fn_tool_%d", i)}, toolNames(t, cs.ClientSession))
			other := fmt.Sprintf("fn_tool_%d", (i+1)%sessions)
			_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: other, Arguments: map[string]any{}})
			assert.Error(t, err, "session %d called session %d's tool", i, (i+1)%sessions)
		})
	}
	wg.Wait()
}

func TestCloseEndsEveryBridgeProgramAndRemovesTheSecret(t *testing.T) {
	b, err := Open(context.Background(), []Tool{echoTool("echo")}, Options{})
	require.NoError(t, err)
	b.Admit(os.Getpid())
	s := b.Server()
	cs := connectClient(t, s.Env[EnvSession])
	require.Equal(t, []string{"fn_echo"}, toolNames(t, cs.ClientSession))

	require.NoError(t, b.Close())
	select {
	case err := <-cs.relayDone:
		assert.NoError(t, err, "the embedder's end closing ends the relay")
	case <-time.After(10 * time.Second):
		t.Fatal("the bridge program outlived Close")
	}
	assert.NoDirExists(t, s.Dir)
	require.NoError(t, b.Close(), "a second Close does nothing")
}

func TestTheSecretIsOnlyInTheSessionFile(t *testing.T) {
	b := open(t, []Tool{echoTool("echo")}, Options{})
	s := b.Server()
	assert.Regexp(t, `^cursorkit[0-9a-f]{8}$`, s.Name)
	assert.NotEqual(t, s.Name, open(t, []Tool{echoTool("echo")}, Options{}).Server().Name, "each bridge has its own name")
	assert.Equal(t, []string{"fn_echo"}, s.Tools)
	assert.Equal(t, []string{bridgeArg}, s.Args)
	assert.Equal(t, []string{EnvSession}, keys(s.Env))
	config, err := os.ReadFile(s.ConfigFile)
	require.NoError(t, err)
	assertNoSecret(t, b, string(config)+fmt.Sprint(s))
	assert.Contains(t, string(config), `"`+s.Name+`"`)

	if runtime.GOOS != "windows" {
		for path, mode := range map[string]os.FileMode{s.Dir: 0o700 | os.ModeDir, s.Env[EnvSession]: 0o600, s.ConfigFile: 0o600} {
			info, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, mode, info.Mode(), path)
		}
	}
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func TestOpenRefusesToolsItCannotPublish(t *testing.T) {
	ok := echoTool("echo")
	with := func(f func(*Tool)) []Tool { t := ok; f(&t); return []Tool{t} }
	for _, tc := range []struct {
		name  string
		tools []Tool
		want  string
	}{
		{"no tools", nil, "at least one tool"},
		{"an empty name", with(func(t *Tool) { t.Name = "" }), "name"},
		{"an upper-case name", with(func(t *Tool) { t.Name = "Echo" }), "name"},
		{"a name with a hyphen", with(func(t *Tool) { t.Name = "look-up" }), "name"},
		{"a name starting with a digit", with(func(t *Tool) { t.Name = "1echo" }), "name"},
		{"a name too long", with(func(t *Tool) { t.Name = strings.Repeat("a", 39) }), "name"},
		{"the same name twice", []Tool{ok, ok}, "registered twice"},
		{"no schema", with(func(t *Tool) { t.InputSchema = nil }), "input schema is missing"},
		{"a schema not JSON", with(func(t *Tool) { t.InputSchema = jsontext.Value("{") }), "not a JSON object"},
		{"a schema of an array", with(func(t *Tool) { t.InputSchema = jsontext.Value(`{"type":"array"}`) }), `"type" is not "object"`},
		{"a schema that is an array", with(func(t *Tool) { t.InputSchema = jsontext.Value(`[]`) }), "not a JSON object"},
		{"no handler", with(func(t *Tool) { t.Handle = nil }), "no handler"},
		{"a negative timeout", with(func(t *Tool) { t.Timeout = -time.Second }), "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Open(context.Background(), tc.tools, Options{})
			assert.Nil(t, b)
			require.Error(t, err)
			assert.Equal(t, failure.Input, failure.KindOf(err))
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func FuzzCheckSchema(f *testing.F) {
	for _, s := range []string{`{"type":"object"}`, `{"type":"array"}`, `[]`, `{"type":"obj\u0065ct"}`, `{"type":["object"]}`, `{"type":"object","type":"object"}`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		err := CheckSchema(schema)
		if err != nil {
			return
		}
		var v struct {
			Type string `json:"type"`
		}
		require.NoError(t, json.Unmarshal(schema, &v), "an accepted schema is a JSON object")
		assert.Equal(t, "object", v.Type)
	})
}

func FuzzValidName(f *testing.F) {
	for _, s := range []string{"echo", "lookup_word", "Echo", "a-b", "", "1a", "a\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if !validName(name) {
			return
		}
		assert.LessOrEqual(t, len(name), maxName)
		for _, c := range []byte(name) {
			assert.True(t, c == '_' || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'), "%q", name)
		}
	})
}

func TestOnlyABridgeProgramTheAdmittedAgentStartedGetsIn(t *testing.T) {
	t.Run("started by the admitted agent or a descendant of it", func(t *testing.T) {
		admitted := []int{os.Getpid()}
		if parent := os.Getppid(); parent > 0 { // Wine has none to show
			admitted = append(admitted, parent)
		}
		for _, pid := range admitted {
			b := openUnadmitted(t, []Tool{echoTool("echo")}, Options{})
			b.Server().Admit(pid)
			cs := connectClient(t, b.Server().Env[EnvSession])
			assert.Equal(t, []string{"fn_echo"}, toolNames(t, cs.ClientSession))
		}
	})
	t.Run("admitted while it connects", func(t *testing.T) {
		b := openUnadmitted(t, []Tool{echoTool("echo")}, Options{})
		go b.Admit(os.Getpid())
		cs := connectClient(t, b.Server().Env[EnvSession])
		assert.Equal(t, []string{"fn_echo"}, toolNames(t, cs.ClientSession))
	})
	t.Run("started by a process the admitted agent did not start", func(t *testing.T) {
		r := newRefusals()
		b := openUnadmitted(t, []Tool{echoTool("echo")}, Options{OnRefused: r.add})
		b.Admit(startIdle(t)) // a child of this process: not an ancestor
		err := relay(bounded(t), blockingReader{}, io.Discard, b.Server().Env[EnvSession], os.Getpid())
		assert.Equal(t, failure.Auth, failure.KindOf(err))
		var re *RefusedError
		require.ErrorAs(t, r.next(t), &re)
		assert.Equal(t, "came from a process the turn's agent did not start", re.Reason)
	})
	t.Run("started by an admitted agent that is gone, its PID reused", func(t *testing.T) {
		r := newRefusals()
		b := openUnadmitted(t, []Tool{echoTool("echo")}, Options{OnRefused: r.add})
		// What Admit keeps of this process, as if it had been created a
		// minute earlier: another process that had the same PID.
		self, err := procid.Self()
		require.NoError(t, err)
		self.Created = self.Created.Add(-time.Minute)
		b.mu.Lock()
		b.agents = append(b.agents, self)
		close(b.known)
		b.mu.Unlock()
		err = relay(bounded(t), blockingReader{}, io.Discard, b.Server().Env[EnvSession], os.Getpid())
		assert.Equal(t, failure.Auth, failure.KindOf(err))
		var re *RefusedError
		require.ErrorAs(t, r.next(t), &re)
		assert.Equal(t, "came from a process the turn's agent did not start", re.Reason)
	})
	t.Run("before any agent was admitted", func(t *testing.T) {
		r := newRefusals()
		b := openUnadmitted(t, []Tool{echoTool("echo")}, Options{OnRefused: r.add})
		err := relay(bounded(t), blockingReader{}, io.Discard, b.Server().Env[EnvSession], os.Getpid())
		assert.Equal(t, failure.Auth, failure.KindOf(err))
		var re *RefusedError
		require.ErrorAs(t, r.next(t), &re)
		assert.Equal(t, "came before any agent was admitted (Bridge.Admit)", re.Reason)
	})
}
