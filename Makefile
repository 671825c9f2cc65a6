# cursorkit: `make run` shows the whole pipeline, `make test` runs both lanes.
GO        ?= go
# Go 1.27 (encoding/json/v2 in the standard library); the module proxy serves
# it and the go command fetches it on first use.
export GOTOOLCHAIN := go1.27.3
PKG       ?= ./...
BIN       := $(CURDIR)/bin
WINEPREFIX ?= $(CURDIR)/.cache/wineprefix
STATICCHECK_VERSION := v0.8.2
FUZZTIME  ?= 10s

export WINEPREFIX
export WINEDEBUG ?= -all

.PHONY: all build run test test-linux test-windows real-clis bench fuzz lint clean

all: build

# cursorkit is built without cgo: a static binary that needs no C library
# and starts sooner, without the dynamic loader (only net's and os/user's
# optional cgo paths would use cgo).
build:
	CGO_ENABLED=0 $(GO) build -o $(BIN)/cursorkit ./cmd/cursorkit
	$(GO) build -o $(BIN)/cursor-agent-sim ./testdata/cursor-agent-sim

run: build
	@scripts/run-demo "$(BIN)"

test: real-clis test-linux test-windows

# The real agent CLIs (claude, codex, gemini) from the npm registry, pinned,
# for the real-CLI tests of both lanes (scripts/real-clis); without npm
# those tests skip, except under CI.
real-clis:
	@scripts/real-clis

# -timeout: a package's whole run (cmd/cursorkit's 42 real turns among
# its tests) may pass go test's 10-minute default on a loaded machine;
# the bound only ends a hang.
#
# NORACE_TESTS are the tests whose point is child processes (crash rounds
# that kill a child mid-write, processes racing over one file, 50 agents
# each starting the 50 bridge programs staged in one worktree): the race
# detector adds nothing to what they check and slows every child, which
# are race builds too, so the race run skips them and a plain run of
# NORACE_PKGS plays them (every round kept).
#
# -parallel 4 and -p 4: the parallel tests (real-CLI turns, simulator
# runs) and most packages' tests mostly wait on child processes, so two
# cores run four tests of a package at a time and four packages at a time
# (go test's default is one package per core: the race run takes 171 s
# instead of 235 s here, cmd/cursorkit's alone 110 to 160 s).
NORACE_TESTS := TestKilledAtEveryStep|TestConcurrentStagersAndAnOperator|TestWriterKilledAtRandomPoints|TestFiftySessionsOnOneWorktreeEachSeeOnlyTheirOwnTools
NORACE_PKGS  := ./mcpstage ./jobs ./mcpbridge
test-linux:
	$(GO) test -race -count=1 -p 4 -parallel 4 -timeout 25m -skip '^($(NORACE_TESTS))$$' $(PKG)
	$(GO) test -count=1 -timeout 25m -run '^($(NORACE_TESTS))$$' $(if $(filter ./...,$(PKG)),$(NORACE_PKGS),$(PKG))

# The Windows lane: the same packages' tests cross-compiled for windows/amd64
# and executed under Wine (scripts/wine-exec). Skipped loudly without Wine,
# and a failure under CI.
test-windows:
	@scripts/test-windows $(PKG)

# The real CLIs first, as for test: the goals of BenchmarkRealClaudeTurn
# and BenchmarkFallbackAtFirstRetry are figures of real turns.
bench: real-clis
	@scripts/bench

fuzz:
	@FUZZTIME=$(FUZZTIME) scripts/fuzz

lint:
	GOOS=linux $(GO) vet ./...
	GOOS=windows $(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	GOBIN=$(CURDIR)/.cache/tools $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	.cache/tools/staticcheck ./...
	GOOS=windows .cache/tools/staticcheck ./...
	GOOS=darwin .cache/tools/staticcheck ./...

clean:
	rm -rf $(BIN) .cache
