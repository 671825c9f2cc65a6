package mcpstage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/internal/procid"
)

// Status is what `cursorkit mcp status` shows: read without the lock,
// from files that are only ever replaced whole.
type Status struct {
	Root string `json:"root"`
	// Git is "repository", "worktree" or "none".
	Git string `json:"git"`
	// Staged: a state file exists (cursorkit has staged here and not yet
	// cleaned up).
	Staged bool          `json:"staged"`
	Leases []LeaseStatus `json:"leases"`
	// Lock is the main lock's owner, when it is held.
	Lock *LockStatus `json:"lock,omitempty"`
	// Quarantine is set while the worktree is quarantined.
	Quarantine *QuarantineStatus `json:"quarantine,omitempty"`
	// Excluded: this worktree's line is in the info/exclude block.
	Excluded bool `json:"excluded"`
	// Baseline: whether a config existed before cursorkit's first write,
	// and its size; nil when nothing is staged.
	Baseline *BaselineStatus `json:"baseline,omitempty"`
	// OperatorEdit: the config held bytes cursorkit did not write.
	OperatorEdit bool `json:"operatorEdit"`
	// Config: whether .cursor/mcp.json exists, and cursorkit's keys in it.
	ConfigPresent bool     `json:"configPresent"`
	ConfigKeys    []string `json:"configKeys"`
	// ConfigError: the config does not parse (why), "" when it does.
	ConfigError string `json:"configError,omitempty"`
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
	// Foreign: the lock directory has no owner file cursorkit can read.
	Foreign bool `json:"foreign,omitempty"`
}

// QuarantineStatus says since when and why.
type QuarantineStatus struct {
	Since  time.Time `json:"since"`
	Reason string    `json:"reason"`
	// Recovery is what the operator does.
	Recovery string `json:"recovery"`
}

// BaselineStatus describes the config as it was before cursorkit.
type BaselineStatus struct {
	Present bool `json:"present"`
	Bytes   int  `json:"bytes"`
}

// Status reports the worktree's staging.
func (s *Stager) Status(ctx context.Context) (Status, error) {
	st := Status{Root: s.shape.Root, Git: [...]string{"none", "repository", "worktree"}[s.shape.Kind], Leases: []LeaseStatus{}, ConfigKeys: []string{}}
	if s.shape.Kind != gitNone {
		ex, err := hasExclusion(s.shape)
		if err != nil {
			return st, err
		}
		st.Excluded = ex
	}
	if err := s.checkWritable(); err != nil {
		return st, err
	}
	if _, err := os.Lstat(s.lockPath); err == nil {
		owner, ok, err := readLockOwner(s.lockPath)
		if err != nil {
			return st, err
		}
		st.Lock = &LockStatus{PID: owner.PID, Hostname: owner.Hostname, AcquiredAt: owner.Acquired, Foreign: !ok}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return st, err
	}
	cur, err := readConfig(s.configPath)
	if err != nil {
		return st, err
	}
	st.ConfigPresent = cur.Present
	if cur.Present {
		keys, err := ourKeys(cur.Raw, s.prefix)
		if err != nil {
			st.ConfigError = oneLine(err.Error())
		} else {
			st.ConfigKeys = append(st.ConfigKeys, keys...)
		}
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
		st.Quarantine = &QuarantineStatus{Since: q.Since, Reason: q.Reason, Recovery: "repair the JSON and remove every " + s.prefix +
			"* server, or delete " + s.configPath + "; then run `cursorkit mcp reconcile --cwd " + s.shape.Root + "`"}
	}
	host, _ := os.Hostname()
	for id, l := range state.Leases {
		ls := LeaseStatus{ID: id, Key: l.Key, Command: l.Entry.Command, EnvNames: []string{}, Owner: l.Owner, AcquiredAt: l.AcquiredAt, HeartbeatAt: l.HeartbeatAt}
		for k := range l.Entry.Env {
			ls.EnvNames = append(ls.EnvNames, k)
		}
		slices.Sort(ls.EnvNames)
		if l.Owner.Hostname == host {
			alive, err := procid.Identity{PID: l.Owner.PID, Created: l.Owner.Created}.Alive(ctx)
			if err == nil {
				ls.OwnerAlive = &alive
			}
		}
		st.Leases = append(st.Leases, ls)
	}
	slices.SortFunc(st.Leases, func(a, b LeaseStatus) int {
		if c := a.AcquiredAt.Compare(b.AcquiredAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return st, nil
}
