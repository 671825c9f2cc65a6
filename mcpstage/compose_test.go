package mcpstage

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
)

const testPrefix = "cursorkit-tools-"

var (
	entryA = keyedEntry{Key: testPrefix + "aaaa", Entry: Entry{Command: "/opt/ck/bin/cursorkit-tools", Args: []string{"serve", "--stdio"}, Env: map[string]string{"Z_LAST": "z", "A_FIRST": "a"}}}
	entryB = keyedEntry{Key: testPrefix + "bbbb", Entry: Entry{Command: "ck"}}
)

// Realistic Cursor configs: stdio servers (command, args, env, envFile,
// type), remote ones (url, headers), interpolations, Windows paths.
var realistic = []string{
	`{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${env:GITHUB_TOKEN}"}
    },
    "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${env:TOKEN}"}}
  }
}
`,
	`{"mcpServers":{"sse":{"url":"http://localhost:3000/sse"},"py":{"type":"stdio","command":"python","args":["${workspaceFolder}/tools/server.py"],"envFile":"${workspaceFolder}/.env"}}}`,
	"{\r\n\t\"mcpServers\": {\r\n\t\t\"win\": {\"command\": \"C:\\\\Program Files\\\\nodejs\\\\npx.cmd\", \"args\": []}\r\n\t}\r\n}\r\n",
	`{"mcpServers":{"keep":{"command":"k"},"cursorkit-tools-0f1e":{"command":"old","args":[]}}}`,
	`{"mcpServers":{}}`,
	`{}`,
	`{"$schema":"https://example.com/mcp.schema.json","mcpServers":{"a":{"command":"a"}},"x-note":[1,2.50,-0,1e400]}`,
}

func TestCompose(t *testing.T) {
	tests := []struct {
		name    string
		current *string // nil: no file
		entries []keyedEntry
		want    string
	}{
		{
			name:    "no file, one entry",
			entries: []keyedEntry{entryB},
			want: `{
  "mcpServers": {
    "cursorkit-tools-bbbb": {
      "command": "ck",
      "args": []
    }
  }
}
`,
		},
		{
			name: "no file, no entries",
			want: "{}\n",
		},
		{
			name:    "env sorted, args kept",
			current: ptr(`{}`),
			entries: []keyedEntry{entryA},
			want: `{
  "mcpServers": {
    "cursorkit-tools-aaaa": {
      "command": "/opt/ck/bin/cursorkit-tools",
      "args": [
        "serve",
        "--stdio"
      ],
      "env": {
        "A_FIRST": "a",
        "Z_LAST": "z"
      }
    }
  }
}
`,
		},
		{
			name:    "operator servers kept in order, ours removed and re-added at the end",
			current: ptr(`{"mcpServers":{"zeta":{"command":"z"},"cursorkit-tools-old":{"command":"gone"},"alpha":{"url":"http://a"},"cursorkit-tools-bbbb":{"command":"stale"}}}`),
			entries: []keyedEntry{entryB},
			want: `{
  "mcpServers": {
    "zeta": {
      "command": "z"
    },
    "alpha": {
      "url": "http://a"
    },
    "cursorkit-tools-bbbb": {
      "command": "ck",
      "args": []
    }
  }
}
`,
		},
		{
			name:    "entries in the order given",
			current: ptr(`{"mcpServers":{"op":{"command":"o"}}}`),
			entries: []keyedEntry{entryB, {Key: testPrefix + "a", Entry: Entry{Command: "a"}}},
			want: `{
  "mcpServers": {
    "op": {
      "command": "o"
    },
    "cursorkit-tools-bbbb": {
      "command": "ck",
      "args": []
    },
    "cursorkit-tools-a": {
      "command": "a",
      "args": []
    }
  }
}
`,
		},
		{
			name:    "other top-level members untouched, in place; mcpServers keeps its place",
			current: ptr(`{"$schema":"s","mcpServers":{},"later":{"b":2,"a":1},"n":1.50E+2}`),
			entries: []keyedEntry{entryB},
			want: `{
  "$schema": "s",
  "mcpServers": {
    "cursorkit-tools-bbbb": {
      "command": "ck",
      "args": []
    }
  },
  "later": {
    "b": 2,
    "a": 1
  },
  "n": 1.50E+2
}
`,
		},
		{
			name:    "mcpServers created as the last member",
			current: ptr(`{"b":true,"a":null}`),
			entries: []keyedEntry{entryB},
			want: `{
  "b": true,
  "a": null,
  "mcpServers": {
    "cursorkit-tools-bbbb": {
      "command": "ck",
      "args": []
    }
  }
}
`,
		},
		{
			name:    "no mcpServers and no entries: not added",
			current: ptr(`{"b":true}`),
			want:    "{\n  \"b\": true\n}\n",
		},
		{
			name:    "mcpServers emptied of ours stays",
			current: ptr(`{"mcpServers":{"cursorkit-tools-x":{"command":"x"}}}`),
			want:    "{\n  \"mcpServers\": {}\n}\n",
		},
		{
			name:    "escapes in names and values kept as written",
			current: ptr(`{"\u0041":"\/p\u00e9\n","mcpServers":{"caf\u00e9":{"command":"C:\\x","args":["\ud83d\ude00","\u2028"]},"lone\ud800":{"url":"\uDC00"}}}`),
			entries: []keyedEntry{{Key: testPrefix + "é", Entry: Entry{Command: "<&>", Args: []string{"\u2028"}}}},
			want: `{
  "\u0041": "\/p\u00e9\n",
  "mcpServers": {
    "caf\u00e9": {
      "command": "C:\\x",
      "args": [
        "\ud83d\ude00",
        "\u2028"
      ]
    },
    "lone\ud800": {
      "url": "\uDC00"
    },
    "cursorkit-tools-é": {
      "command": "<&>",
      "args": [
        "` + "\u2028" + `"
      ]
    }
  }
}
`,
		},
		{
			name:    "an escaped name is matched decoded: mcpServers and our prefix",
			current: ptr(`{"mcp\u0053ervers":{"cursorkit\u002dtools-old":1,"op":2}}`),
			entries: []keyedEntry{entryB},
			want: `{
  "mcp\u0053ervers": {
    "op": 2,
    "cursorkit-tools-bbbb": {
      "command": "ck",
      "args": []
    }
  }
}
`,
		},
		{
			name:    "nested values re-indented only",
			current: ptr("{\"mcpServers\":{\"deep\":{\"command\":\"d\",\"x\":[[],{},[1,[2,{\"k\":[true,false,null]}]]],\"n\":-0.0e-0}}}"),
			want: `{
  "mcpServers": {
    "deep": {
      "command": "d",
      "x": [
        [],
        {},
        [
          1,
          [
            2,
            {
              "k": [
                true,
                false,
                null
              ]
            }
          ]
        ]
      ],
      "n": -0.0e-0
    }
  }
}
`,
		},
		{
			name:    "duplicates: operator copies kept verbatim, every copy of ours removed",
			current: ptr(`{"x":1,"x":2,"mcpServers":{"op":{"a":1,"a":2},"op":3,"cursorkit-tools-d":1,"cursorkit-tools-d":2}}`),
			want: `{
  "x": 1,
  "x": 2,
  "mcpServers": {
    "op": {
      "a": 1,
      "a": 2
    },
    "op": 3
  }
}
`,
		},
		{
			name:    "whitespace around the object and CRLF are fine",
			current: ptr("\r\n \t{ \"a\" :\r\n[ ] }\r\n\r\n"),
			want:    "{\n  \"a\": []\n}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var current []byte
			if tt.current != nil {
				current = []byte(*tt.current)
			}
			got, err := compose(current, testPrefix, tt.entries)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))

			again, err := compose(got, testPrefix, tt.entries)
			require.NoError(t, err)
			assert.Equal(t, string(got), string(again), "compose is a fixed point")
		})
	}
}

func ptr(s string) *string { return &s }

func TestComposeIdempotentOnRealisticConfigs(t *testing.T) {
	for _, cfg := range realistic {
		for _, entries := range [][]keyedEntry{nil, {entryA}, {entryA, entryB}} {
			once, err := compose([]byte(cfg), testPrefix, entries)
			require.NoError(t, err, cfg)
			twice, err := compose(once, testPrefix, entries)
			require.NoError(t, err)
			assert.Equal(t, string(once), string(twice))

			// Releasing everything of ours after staging gives the same
			// bytes as composing the operator's file with no entries, but
			// for an mcpServers that staging created: it stays, empty (the
			// bytes alone do not say who created it; the stager restores
			// the baseline when nothing else changed).
			released, err := compose(once, testPrefix, nil)
			require.NoError(t, err)
			plain, err := compose([]byte(cfg), testPrefix, nil)
			require.NoError(t, err)
			if len(entries) > 0 && !strings.Contains(cfg, serversName) {
				plain = append(bytes.TrimSuffix(plain, []byte("\n}\n")), []byte(",\n  \"mcpServers\": {}\n}\n")...)
				if cfg == "{}" {
					plain = []byte("{\n  \"mcpServers\": {}\n}\n")
				}
			}
			assert.Equal(t, string(plain), string(released))
		}
	}
}

func TestComposeUnparsable(t *testing.T) {
	tests := []struct {
		name, current, msg string
	}{
		{"zero bytes", "", "it is empty"},
		{"only whitespace", " \r\n\t ", "it is empty"},
		{"byte order mark", "\ufeff{}", "byte order mark"},
		{"invalid UTF-8 in a string", "{\"a\":\"\xff\"}", "not valid UTF-8"},
		{"invalid UTF-8 outside", "{}\xc3", "not valid UTF-8"},
		{"top-level array", `[{"mcpServers":{}}]`, "not an object"},
		{"top-level string", `"x"`, "not an object"},
		{"top-level null", `null`, "not an object"},
		{"trailing garbage", `{} x`, "syntax error at byte offset 3"},
		{"second value", `{} {}`, "more than one JSON value"},
		{"truncated", `{"mcpServers":{"a":`, "not valid JSON"},
		{"trailing comma", `{"a":1,}`, "not valid JSON"},
		{"comment (JSONC)", "{// c\n}", "not valid JSON"},
		{"non-string name", `{1:2}`, "not valid JSON"},
		{"mcpServers null", `{"mcpServers":null}`, `"mcpServers" is not an object`},
		{"mcpServers array", `{"mcpServers":[]}`, `"mcpServers" is not an object`},
		{"mcpServers string", `{"mcpServers":"x"}`, `"mcpServers" is not an object`},
		{"mcpServers bad", `{"mcpServers":x}`, "not valid JSON"},
		{"mcpServers twice", `{"mcpServers":{},"a":1,"mcp\u0053ervers":{}}`, `more than one "mcpServers"`},
		{"bad escape in a name", `{"\x":1}`, "not valid JSON"},
		{"error inside mcpServers", `{"mcpServers":{"a":{"b":]}}}`, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := compose([]byte(tt.current), testPrefix, []keyedEntry{entryB})
			require.Error(t, err)
			assert.Equal(t, failure.Setup, failure.KindOf(err), "%v", err)
			assert.ErrorContains(t, err, tt.msg)

			_, err = ourKeys([]byte(tt.current), testPrefix)
			assert.Equal(t, failure.Setup, failure.KindOf(err), "%v", err)
		})
	}
}

// TestComposeNamesDeepNesting: arrays or objects nested past jsontext's
// limit are refused for their depth, valid JSON or not; at the limit they
// parse, and a syntax error before the limit is still one.
func TestComposeNamesDeepNesting(t *testing.T) {
	// Four levels before the args' arrays: the document, mcpServers, the
	// server and args.
	const head = `{"mcpServers":{"deep":{"command":"x","args":[`
	inServer := func(value string) string { return head + value + `]}}}` }
	arrays := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		name, current, msg string // msg "": parses
	}{
		{"10,000 arrays in a server", inServer(arrays(10000)), fmt.Sprintf("nested deeper than 10000 levels (at byte offset %d)", len(head)+10000-4)}, // the '[' of level 10,001
		{"10,000 objects in a member", `{"a":` + strings.Repeat(`{"":`, 10000) + `1` + strings.Repeat("}", 10000) + `}`, "nested deeper than 10000 levels"},
		{"at the limit", inServer(arrays(10000 - 4)), ""},
		{"one past the limit", inServer(arrays(10000 - 3)), "nested deeper than 10000 levels"},
		{"a syntax error before the limit", inServer(strings.Repeat("[", 50) + "x" + arrays(10000)), "syntax error at byte offset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ourKeys([]byte(tt.current), testPrefix)
			if tt.msg == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, failure.Setup, failure.KindOf(err), "%v", err)
			assert.ErrorContains(t, err, tt.msg)
			if tt.msg != "syntax error at byte offset" {
				assert.NotContains(t, err.Error(), "syntax error")
			}
		})
	}
}

func TestComposeErrorsQuoteNoContent(t *testing.T) {
	secret := "ghp_SECRETSECRET"
	for _, current := range []string{
		`{"mcpServers":{"a":{"env":{"T":"` + secret + `"}}}} ` + secret,
		`{"mcpServers":{"a":{"env":{"T":"` + secret + `\q"}}}}`,
		`{"mcpServers":{"a":{"env":{"T":"` + secret + `\ud800\u"}}}}`,
	} {
		_, err := compose([]byte(current), testPrefix, nil)
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "SECRET")
	}
}

func TestComposeBadArguments(t *testing.T) {
	tests := []struct {
		name    string
		prefix  string
		entries []keyedEntry
		msg     string
	}{
		{"empty prefix", "", []keyedEntry{entryB}, "prefix"},
		{"prefix not UTF-8", "\xff", nil, "prefix"},
		{"key without the prefix", testPrefix, []keyedEntry{{Key: "other", Entry: Entry{Command: "c"}}}, "not the prefix"},
		{"key only the prefix", testPrefix, []keyedEntry{{Key: testPrefix, Entry: Entry{Command: "c"}}}, "not the prefix"},
		{"key not UTF-8", testPrefix, []keyedEntry{{Key: testPrefix + "\xff", Entry: Entry{Command: "c"}}}, "not the prefix"},
		{"key twice", testPrefix, []keyedEntry{entryB, entryB}, "given twice"},
		{"bad entry", testPrefix, []keyedEntry{{Key: testPrefix + "x"}}, "command is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := compose([]byte(`{}`), tt.prefix, tt.entries)
			require.Error(t, err)
			assert.Equal(t, failure.Input, failure.KindOf(err))
			assert.ErrorContains(t, err, tt.msg)
		})
	}
	_, err := ourKeys(nil, "")
	assert.Equal(t, failure.Input, failure.KindOf(err))
}

func TestOurKeys(t *testing.T) {
	tests := []struct {
		name    string
		current []byte
		want    []string
	}{
		{"no file", nil, nil},
		{"no mcpServers", []byte(`{"a":{"cursorkit-tools-x":1}}`), nil},
		{"empty mcpServers", []byte(`{"mcpServers":{}}`), nil},
		{"operator only", []byte(`{"mcpServers":{"cursorkit":1,"tools-cursorkit-tools-":2}}`), nil},
		{"file order, duplicates once, escapes decoded", []byte(`{"mcpServers":{"cursorkit-tools-b":1,"op":2,"cursorkit-tools-a":3,"cursorkit\u002dtools-b":4,"cursorkit-tools-\u00e9":5}}`),
			[]string{"cursorkit-tools-b", "cursorkit-tools-a", "cursorkit-tools-é"}},
		{"only the key is the prefix", []byte(`{"mcpServers":{"cursorkit-tools-":1}}`), []string{"cursorkit-tools-"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ourKeys(tt.current, testPrefix)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}

	staged, err := compose([]byte(realistic[0]), testPrefix, []keyedEntry{entryB, entryA})
	require.NoError(t, err)
	got, err := ourKeys(staged, testPrefix)
	require.NoError(t, err)
	assert.Equal(t, []string{entryB.Key, entryA.Key}, got)
}

func TestCheckEntry(t *testing.T) {
	tests := []struct {
		name  string
		entry Entry
		msg   string // "" when valid
	}{
		{"minimal", Entry{Command: "c"}, ""},
		{"full", Entry{Command: "/bin/c", Args: []string{"", "a b", "é"}, Env: map[string]string{"A": "", "lower_1": "x=y"}}, ""},
		{"empty command", Entry{}, "command is empty"},
		{"blank command", Entry{Command: " \t"}, "command is empty"},
		{"NUL in command", Entry{Command: "c\x00"}, "command holds a NUL"},
		{"command not UTF-8", Entry{Command: "c\xff"}, "command holds a NUL byte or is not valid UTF-8"},
		{"NUL in an arg", Entry{Command: "c", Args: []string{"ok", "a\x00b"}}, "argument 2"},
		{"arg not UTF-8", Entry{Command: "c", Args: []string{"\xc3"}}, "argument 1"},
		{"empty env name", Entry{Command: "c", Env: map[string]string{"": "v"}}, "name of the MCP server is empty"},
		{"env name with =", Entry{Command: "c", Env: map[string]string{"TOKEN=abc": "v"}}, "holds '='"},
		{"env name with NUL", Entry{Command: "c", Env: map[string]string{"A\x00": "v"}}, "holds '='"},
		{"env name not UTF-8", Entry{Command: "c", Env: map[string]string{"A\xff": "v"}}, "holds '='"},
		{"env value with NUL", Entry{Command: "c", Env: map[string]string{"A": "v\x00"}}, "variable A holds a NUL"},
		{"env value not UTF-8", Entry{Command: "c", Env: map[string]string{"A": "\xff"}}, "variable A holds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkEntry(tt.entry)
			if tt.msg == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, failure.Input, failure.KindOf(err))
			assert.ErrorContains(t, err, tt.msg)
			assert.NotContains(t, err.Error(), "abc", "an env name holding '=' is not quoted")
		})
	}
}

// laxOptions read what compose accepts: duplicate names and escaped lone
// surrogates.
var laxOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// pair is a member as a reference walk sees it: the decoded name, the raw
// name and the value compacted (strings and numbers as written).
type pair struct {
	name, rawName, value string
}

// walk is an independent reading of a config (top-level members, and the
// members of mcpServers when it is an object), with the token API.
func walk(t *testing.T, data []byte) (top, servers []pair) {
	t.Helper()
	dec := jsontext.NewDecoder(bytes.NewReader(data), laxOptions...)
	tok, err := dec.ReadToken()
	require.NoError(t, err)
	require.Equal(t, jsontext.Kind('{'), tok.Kind())
	members := func() []pair {
		var ps []pair
		for dec.PeekKind() != '}' {
			raw, err := dec.ReadValue()
			require.NoError(t, err)
			p := pair{rawName: string(raw)}
			require.NoError(t, json.Unmarshal(raw, &p.name, jsontext.AllowInvalidUTF8(true)))
			if p.name == serversName && dec.PeekKind() == '{' {
				_, err := dec.ReadToken()
				require.NoError(t, err)
				servers = []pair{}
				for dec.PeekKind() != '}' {
					raw, err := dec.ReadValue()
					require.NoError(t, err)
					s := pair{rawName: string(raw)}
					require.NoError(t, json.Unmarshal(raw, &s.name, jsontext.AllowInvalidUTF8(true)))
					v, err := dec.ReadValue()
					require.NoError(t, err)
					c := v.Clone()
					require.NoError(t, c.Compact())
					s.value = string(c)
					servers = append(servers, s)
				}
				_, err = dec.ReadToken()
				require.NoError(t, err)
				ps = append(ps, p)
				continue
			}
			v, err := dec.ReadValue()
			require.NoError(t, err)
			c := v.Clone()
			require.NoError(t, c.Compact())
			p.value = string(c)
			ps = append(ps, p)
		}
		_, err := dec.ReadToken()
		require.NoError(t, err)
		return ps
	}
	top = members()
	_, err = dec.ReadToken()
	require.ErrorIs(t, err, io.EOF)
	return top, servers
}

func operatorServers(servers []pair) []pair {
	var ops []pair
	for _, s := range servers {
		if !strings.HasPrefix(s.name, testPrefix) {
			ops = append(ops, s)
		}
	}
	return ops
}

func FuzzCompose(f *testing.F) {
	for _, cfg := range realistic {
		f.Add([]byte(cfg))
	}
	for _, s := range []string{"", " ", "\ufeff{}", "[]", "{} {}", `{"mcpServers":null}`, `{"mcpServers":{},"mcpServers":{}}`,
		`{"mcp\u0053ervers":{"cursorkit\u002dtools-x":{},"a\ud800":[]}}`, `{"a":1,"a":2,"mcpServers":{"b":{"c":1,"c":2},"b":0}}`,
		"{\"a\":\"\xff\"}", `{"mcpServers":{"cursorkit-tools-seed":{"command":"stale","args":[]}}}`} {
		f.Add([]byte(s))
	}
	entry := keyedEntry{Key: testPrefix + "fuzz", Entry: Entry{Command: "ck", Args: []string{"mcp"}, Env: map[string]string{"K": "v"}}}
	wantEntry, err := json.Marshal(entry.Entry, json.Deterministic(true))
	require.NoError(f, err)

	f.Fuzz(func(t *testing.T, current []byte) {
		out, err := compose(current, testPrefix, []keyedEntry{entry})
		_, keysErr := ourKeys(current, testPrefix)
		if err != nil {
			assert.Equal(t, failure.Setup, failure.KindOf(err), "%v", err)
			assert.Error(t, keysErr, "ourKeys and compose agree on what parses")
			return
		}
		require.NoError(t, keysErr)

		// Formatted: one object, two-space indent, one final newline.
		require.True(t, bytes.HasSuffix(out, []byte("}\n")), "%q", out)
		formatted := jsontext.Value(bytes.Clone(out[:len(out)-1]))
		require.NoError(t, formatted.Indent(jsontext.WithIndent("  ")))
		assert.Equal(t, string(out[:len(out)-1]), string(formatted))
		assert.True(t, utf8.Valid(out))

		// Exactly our entry under the prefix, written as given, last.
		keys, err := ourKeys(out, testPrefix)
		require.NoError(t, err)
		assert.Equal(t, []string{entry.Key}, keys)
		outTop, outServers := walk(t, out)
		require.NotEmpty(t, outServers)
		last := outServers[len(outServers)-1]
		assert.Equal(t, entry.Key, last.name)
		assert.Equal(t, string(wantEntry), last.value)

		// Operator content: top-level members and servers kept in order,
		// names as spelled, values as written.
		var curTop, curServers []pair
		if current != nil {
			curTop, curServers = walk(t, current)
		}
		assert.Equal(t, operatorServers(curServers), operatorServers(outServers))
		var curOthers, outOthers []pair
		for _, p := range curTop {
			if p.name != serversName {
				curOthers = append(curOthers, p)
			}
		}
		for i, p := range outTop {
			if p.name != serversName {
				outOthers = append(outOthers, p)
			} else if curServers == nil {
				assert.Equal(t, len(outTop)-1, i, "mcpServers is added last")
			}
		}
		assert.Equal(t, curOthers, outOthers)

		// A fixed point, and releasing ours leaves the operator's content.
		again, err := compose(out, testPrefix, []keyedEntry{entry})
		require.NoError(t, err)
		assert.Equal(t, string(out), string(again))
		released, err := compose(out, testPrefix, nil)
		require.NoError(t, err)
		keys, err = ourKeys(released, testPrefix)
		require.NoError(t, err)
		assert.Empty(t, keys)
	})
}

func FuzzCheckEntry(f *testing.F) {
	f.Add("npx", "-y", "GITHUB_TOKEN", "${env:GITHUB_TOKEN}")
	f.Add("", "", "", "")
	f.Add(" ", "a\x00", "A=B", "\xff")
	f.Add("C:\\Program Files\\node.exe", "é", "Path", "C:\\x;D:\\y")
	f.Fuzz(func(t *testing.T, command, arg, name, value string) {
		e := Entry{Command: command, Args: []string{arg}, Env: map[string]string{name: value}}
		err := checkEntry(e)
		valid := strings.TrimSpace(command) != "" &&
			cleanRef(command) && cleanRef(arg) && cleanRef(value) &&
			name != "" && !strings.Contains(name, "=") && cleanRef(name)
		if !valid {
			require.Error(t, err)
			assert.Equal(t, failure.Input, failure.KindOf(err))
			return
		}
		require.NoError(t, err)
		out, err := compose(nil, testPrefix, []keyedEntry{{Key: testPrefix + "x", Entry: e}})
		require.NoError(t, err)
		var back struct {
			MCPServers map[string]Entry `json:"mcpServers"`
		}
		require.NoError(t, json.Unmarshal(out, &back))
		assert.Equal(t, map[string]Entry{testPrefix + "x": e}, back.MCPServers)
	})
}

func cleanRef(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}
