package shim_test

import (
	"testing"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/shim"
)

// cursorArgs is a typical cursor-agent invocation.
var cursorArgs = []string{"-p", "--output-format", "stream-json", "--model",
	"claude-opus-4-8[context=1m,effort=high]", "--force", `C:\Users\A User\repo\`}

func BenchmarkBuildBatch(b *testing.B) {
	res := discovery.Resolution{Path: `C:\Users\A User\AppData\Roaming\npm\cursor-agent.cmd`, Kind: discovery.CmdShim}
	opts := winOpts()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := shim.Build(res, cursorArgs, opts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBuildNative(b *testing.B) {
	res := discovery.Resolution{Path: `C:\Program Files\Cursor\cursor-agent.exe`, Kind: discovery.Native}
	opts := winOpts()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := shim.Build(res, cursorArgs, opts); err != nil {
			b.Fatal(err)
		}
	}
}
