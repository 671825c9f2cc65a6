package probe

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/safefile"
)

// versionTTL is how long a cached --version answer is trusted.
const versionTTL = 24 * time.Hour

// maxCachedVersionOutput bounds the --version output worth caching; a
// larger answer is not a build identifier and is simply probed again.
const maxCachedVersionOutput = 64 << 10

// versionCache remembers the --version output of binaries that answered
// it, so that `cursorkit run` can skip spawning one (for the real agent a
// Node.js start) before every turn. It is meant for run only: probe,
// status, models, doctor and the settings endpoint always run the binary.
//
// An entry is trusted only for the same file: the resolved path, its
// symlink chain, and the final target's size, modification time and (on
// POSIX) device and inode must all match what was recorded, and the entry
// must be younger than TTL (zero means versionTTL). Only successful
// probes are recorded. A wrapper script (a .cmd shim, a shell wrapper)
// whose own file stays the same while its target is updated is the blind
// spot: the entry then stays until the TTL ends. A nil Now means
// time.Now. Files in Dir are replaced atomically; a versionCache is safe
// for concurrent use.
type versionCache struct {
	Dir string
	TTL time.Duration
	Now func() time.Time
}

// fileIdentity is what must not have changed for a cached answer to hold.
type fileIdentity struct {
	Path    string   `json:"path"`
	Links   []string `json:"links,omitempty"`
	Size    int64    `json:"size"`
	ModTime int64    `json:"modTimeNs"`
	// Dev and Ino identify the final target on POSIX; zero elsewhere.
	Dev uint64 `json:"dev,omitempty"`
	Ino uint64 `json:"ino,omitempty"`
}

func (a fileIdentity) equal(b fileIdentity) bool {
	return a.Path == b.Path && slices.Equal(a.Links, b.Links) && a.Size == b.Size &&
		a.ModTime == b.ModTime && a.Dev == b.Dev && a.Ino == b.Ino
}

// identify returns the identity of the file res names, as fsys sees it
// (Stat follows the symlink chain to its final target).
func identify(fsys discovery.FS, res discovery.Resolution) (fileIdentity, error) {
	info, err := fsys.Stat(res.Path)
	if err != nil {
		return fileIdentity{}, err
	}
	if !info.Mode().IsRegular() {
		return fileIdentity{}, fmt.Errorf("not a regular file")
	}
	id := fileIdentity{Path: res.Path, Links: res.Links, Size: info.Size(), ModTime: info.ModTime().UnixNano()}
	id.Dev, id.Ino = fileID(info)
	return id, nil
}

// cachedVersion is the file format.
type cachedVersion struct {
	Format   int          `json:"format"`
	File     fileIdentity `json:"file"`
	ProbedAt time.Time    `json:"probedAt"`
	// Output is the --version stdout that was parsed.
	Output string `json:"output"`
}

const versionCacheFormat = 1

func (c *versionCache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *versionCache) ttl() time.Duration {
	if c.TTL > 0 {
		return c.TTL
	}
	return versionTTL
}

func (c *versionCache) file(path string) string {
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(c.Dir, "version-"+hex.EncodeToString(sum[:16])+".json")
}

// load returns the output cached for id and when it was probed, or ok
// false when there is no fresh entry for exactly this file: missing,
// expired, dated in the future, written for another file identity, or
// corrupt (ignored; the next store rewrites it).
func (c *versionCache) load(id fileIdentity) (output string, probedAt time.Time, ok bool) {
	if c.Dir == "" {
		return "", time.Time{}, false
	}
	data, err := safefile.Read(c.file(id.Path), maxCacheFile)
	if err != nil {
		return "", time.Time{}, false
	}
	var cv cachedVersion
	if err := json.Unmarshal(data, &cv); err != nil {
		return "", time.Time{}, false
	}
	now := c.now()
	switch {
	case cv.Format != versionCacheFormat, !cv.File.equal(id), cv.Output == "", len(cv.Output) > maxCachedVersionOutput,
		cv.ProbedAt.After(now), now.Sub(cv.ProbedAt) >= c.ttl():
		return "", time.Time{}, false
	}
	return cv.Output, cv.ProbedAt, true
}

// store records output as the --version answer of the file id, probed now.
func (c *versionCache) store(id fileIdentity, output []byte) error {
	if c.Dir == "" {
		return failure.New(failure.Setup, "the version cache has no directory")
	}
	if len(output) == 0 || len(output) > maxCachedVersionOutput {
		return nil
	}
	data, err := json.Marshal(cachedVersion{Format: versionCacheFormat, File: id, ProbedAt: c.now().UTC(), Output: string(output)})
	if err != nil {
		return failure.Wrap(failure.Unclassified, err, "encoding the version cache")
	}
	if err := safefile.Write(c.file(id.Path), data, 0o600); err != nil {
		return failure.Wrap(failure.Resource, err, "writing the version cache")
	}
	return nil
}
