package mcpstage

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"time"
)

// Status is what `cursorkit mcp status` shows: read without the lock,
// from files that are only ever replaced whole.
type Status struct {
	Root       string            `json:"root"`
	Git        string            `json:"git"`    // "repository", "worktree" or "none"
	Staged     bool              `json:"staged"` // a state file exists: staged here and not yet cleaned up
	Leases     []LeaseStatus     `json:"leases"`
	Lock       *LockStatus       `json:"lock,omitempty"`       // the main lock's owner, when it is held
	Quarantine *QuarantineStatus `json:"quarantine,omitempty"` // set while the worktree is quarantined
	Excluded   bool              `json:"excluded"`             // this worktree's line is in the info/exclude block
	// MadeDir: the info/exclude block records that cursorkit made .cursor/
	// (its last cleanup removes it once empty).
	MadeDir bool `json:"madeDir"`
	// Baseline: whether a config existed before cursorkit's first write,
	// and its size; nil when nothing is staged.
	Baseline      *BaselineStatus `json:"baseline,omitempty"`
	OperatorEdit  bool            `json:"operatorEdit"`          // the config held bytes cursorkit did not write
	ConfigPresent bool            `json:"configPresent"`         // .cursor/mcp.json exists
	ConfigKeys    []string        `json:"configKeys"`            // cursorkit's keys in it
	ConfigError   string          `json:"configError,omitempty"` // why the config does not parse
	// PendingWrite: a journalled write not yet settled (a crash; the next
	// stage, release or reconcile settles it).
	PendingWrite string `json:"pendingWrite,omitempty"`
}

// LeaseStatus is one lease as status shows it (never its environment's
// values: they may be secrets).
type LeaseStatus struct {
	ID          string     `json:"lease"`
	Key         string     `json:"serverKey"`
	Command     string     `json:"command"`
	EnvNames    []string   `json:"envNames"`
	Owner       LeaseOwner `json:"owner"`
	OwnerAlive  *bool      `json:"ownerAlive,omitempty"` // nil: another host
	AcquiredAt  time.Time  `json:"acquiredAt"`
	HeartbeatAt time.Time  `json:"heartbeatAt"`
}

// LockStatus is the main lock's owner.
type LockStatus struct {
	PID        int       `json:"pid"`
	Hostname   string    `json:"hostname"`
	AcquiredAt time.Time `json:"acquiredAt"`
	Foreign    bool      `json:"foreign,omitzero"` // the lock directory has no owner file cursorkit can read
}

// QuarantineStatus says since when and why.
type QuarantineStatus struct {
	Since    time.Time `json:"since"`
	Reason   string    `json:"reason"`
	Recovery string    `json:"recovery"` // what the operator does
}

// BaselineStatus describes the config as it was before cursorkit.
type BaselineStatus struct {
	Present bool `json:"present"`
	Bytes   int  `json:"bytes"`
}

// Status reports the worktree's staging.
func (s *Stager) Status(ctx context.Context) (Status, error) {
	st := Status{Root: s.shape.Root, Git: string(s.shape.Kind), Leases: []LeaseStatus{}, ConfigKeys: []string{}}
	b, err := readBlock(s.shape)
	if err != nil {
		return st, err
	}
	st.Excluded, st.MadeDir = b.has(s.shape.Root), b.madeHere(s.shape.Root)
	if err := s.checkWritable(); err != nil {
		return st, err
	}
	if _, err := os.Lstat(s.lockPath); err == nil {
		ins, err := inspect(s.lockPath)
		if err != nil {
			return st, err
		}
		st.Lock = &LockStatus{PID: ins.owner.PID, Hostname: ins.owner.Hostname, AcquiredAt: ins.owner.Acquired, Foreign: !ins.ok}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return st, err
	}
	cur, err := readConfig(s.configPath)
	if err != nil {
		return st, err
	}
	st.ConfigPresent = cur.Present
	if keys, err := ourKeys(cur.Raw, s.prefix); err != nil { // no bytes (no file): no keys
		st.ConfigError = oneLine(err.Error())
	} else {
		st.ConfigKeys = append(st.ConfigKeys, keys...)
	}
	state, err := readState(s.statePath)
	if err != nil || state == nil {
		return st, err
	}
	st.Staged = true
	st.OperatorEdit = state.OperatorEdit
	if state.Baseline != nil {
		st.Baseline = &BaselineStatus{Present: state.Baseline.Present, Bytes: len(state.Baseline.Raw)}
	}
	if state.Pending != nil {
		st.PendingWrite = state.Pending.Kind
	}
	if q := state.Quarantine; q != nil {
		st.Quarantine = &QuarantineStatus{Since: q.Since, Reason: q.Reason, Recovery: s.recovery(s.configPath)}
	}
	host, _ := os.Hostname()
	for id, l := range state.Leases {
		ls := LeaseStatus{ID: id, Key: l.Key, Command: l.Entry.Command, Owner: l.Owner, AcquiredAt: l.AcquiredAt, HeartbeatAt: l.HeartbeatAt,
			EnvNames: append([]string{}, slices.Sorted(maps.Keys(l.Entry.Env))...)}
		if alive, known := l.Owner.alive(ctx, host); known {
			ls.OwnerAlive = &alive
		}
		st.Leases = append(st.Leases, ls)
	}
	slices.SortFunc(st.Leases, func(a, b LeaseStatus) int {
		return cmp.Or(a.AcquiredAt.Compare(b.AcquiredAt), strings.Compare(a.ID, b.ID))
	})
	return st, nil
}
