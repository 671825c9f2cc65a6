package mcpstage

import (
	"bytes"
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/procid"
	"github.com/cursorkit/cursorkit/internal/safefile"
)

const (
	// maxConfigBytes bounds the config file read: an mcp.json is a few
	// kilobytes; past this it is not a config cursorkit should rewrite.
	maxConfigBytes = 4 << 20
	// maxStateBytes bounds the state file: the baseline and the journal's
	// config bytes, each bounded by maxConfigBytes.
	maxStateBytes = 4*maxConfigBytes + 1<<20
	stateVersion  = 1
)

// content is a config file's bytes, or its absence.
type content struct {
	Present bool   `json:"present"`
	Raw     []byte `json:"raw,omitempty"`
}

// same reports whether a and b are the same bytes (or both absent).
func (a content) same(b content) bool {
	return a.Present == b.Present && (!a.Present || bytes.Equal(a.Raw, b.Raw))
}

// Mutation kinds of the journal.
const (
	kindWrite   = "write"   // cursorkit's entries composed into the config
	kindRestore = "restore" // the baseline bytes put back
	kindDelete  = "delete"  // the config removed (the baseline had none)
)

// pending is a journalled mutation: the config bytes about to be written.
type pending struct {
	Kind string `json:"kind"`
	content
	Seq int64 `json:"seq"`
}

// confirmed is the config bytes cursorkit last wrote or accepted (an edit).
type confirmed struct {
	content
	Seq int64 `json:"seq"`
}

// quarantine marks a worktree whose config an operator made unparsable.
type quarantine struct {
	Since  time.Time `json:"since"`
	Reason string    `json:"reason"`
}

// LeaseOwner is the process a lease belongs to.
type LeaseOwner struct {
	PID      int       `json:"pid"`
	Created  time.Time `json:"created"`
	Hostname string    `json:"hostname"`
}

// same reports whether o and other name one process.
func (o LeaseOwner) same(other LeaseOwner) bool {
	return o.PID == other.PID && o.Created.Equal(other.Created) && o.Hostname == other.Hostname
}

// alive reports whether the owner's process runs; known is false for
// another host's owner, or when that cannot be told.
func (o LeaseOwner) alive(ctx context.Context, host string) (alive, known bool) {
	if o.Hostname != host {
		return false, false
	}
	alive, err := procid.Identity{PID: o.PID, Created: o.Created}.Alive(ctx)
	return alive, err == nil
}

// leaseRecord is one lease in the manifest, with the complete entry.
type leaseRecord struct {
	Key         string     `json:"key"`
	Entry       Entry      `json:"entry"`
	Owner       LeaseOwner `json:"owner"`
	AcquiredAt  time.Time  `json:"acquiredAt"`
	HeartbeatAt time.Time  `json:"heartbeatAt"`
}

// state is the manifest, .cursor/.cursorkit-mcp-state.json: the baseline,
// the journal, the quarantine latch and every live lease.
type state struct {
	Version    int        `json:"version"`
	CreatedDir bool       `json:"createdDir"`         // cursorkit made .cursor/: the last cleanup may remove it
	Baseline   *content   `json:"baseline,omitempty"` // the config before cursorkit's first write
	Confirmed  *confirmed `json:"confirmed,omitempty"`
	Pending    *pending   `json:"pending,omitempty"`
	// OperatorEdit latches once the config held bytes cursorkit did not
	// write: the baseline is never restored over them.
	OperatorEdit bool                    `json:"operatorEdit"`
	Quarantine   *quarantine             `json:"quarantine,omitempty"`
	Leases       map[string]*leaseRecord `json:"leases"`
}

// readState reads the manifest; a missing one is (nil, nil).
func readState(path string) (*state, error) {
	data, err := safefile.Read(path, maxStateBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, failure.Wrap(failure.Setup, err, "reading the staging state %s", path)
	}
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, failure.Wrap(failure.Setup, err, "the staging state %s does not decode: if no cursorkit process uses this worktree, run `cursorkit mcp reconcile`, or remove it", path)
	}
	if st.Version != stateVersion {
		return nil, failure.New(failure.Setup, "the staging state %s has version %d; this cursorkit knows %d", path, st.Version, stateVersion)
	}
	if st.Leases == nil {
		st.Leases = map[string]*leaseRecord{}
	}
	return &st, nil
}

// writeState replaces the manifest atomically.
func writeState(path string, st *state) error {
	data, err := json.Marshal(st, jsontext.WithIndent("  "))
	if err != nil {
		return failure.Wrap(failure.Unclassified, err, "encoding the staging state")
	}
	return failure.Wrap(failure.Setup, safefile.Write(path, append(data, '\n'), 0o600), "writing the staging state")
}

// readConfig reads the config file, refusing anything but a regular file.
func readConfig(path string) (content, error) {
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return content{}, nil
	}
	if err != nil {
		return content{}, failure.Wrap(failure.Setup, err, "inspecting %s", path)
	}
	if !info.Mode().IsRegular() {
		return content{}, notRegular(path, info)
	}
	data, err := safefile.Read(path, maxConfigBytes)
	if err != nil {
		return content{}, failure.Wrap(failure.Setup, err, "reading %s", path)
	}
	return content{Present: true, Raw: data}, nil
}

func notRegular(path string, info fs.FileInfo) error {
	return failure.New(failure.Setup, "%s is not a regular file (%s): cursorkit does not stage into it", path, info.Mode().Type())
}
