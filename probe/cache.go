package probe

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json/v2"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/safefile"
)

// How long a cached catalog is used (docs/contract.md, "Defaults") and a
// cached --version answer trusted.
const (
	catalogTTL = time.Hour
	versionTTL = 24 * time.Hour
)

// maxCacheFile bounds what the cache reads back; a larger file is corrupt.
const maxCacheFile = 4 << 20

// cacheFiles is a directory of JSON cache files, each replaced atomically,
// so a cache is safe for concurrent use: files are never seen half-written
// and the last writer wins. A nil Now means time.Now.
type cacheFiles struct {
	Dir string
	Now func() time.Time
}

func (c cacheFiles) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// path is the file of key, named by its hash after prefix.
func (c cacheFiles) path(prefix, key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(c.Dir, prefix+"-"+hex.EncodeToString(sum[:16])+".json")
}

// read decodes file into v. It is false when there is no directory or the
// file is missing or corrupt: a corrupt file is ignored, and the next write
// replaces it. Only what write writes is read: a member given twice, a
// name spelled in another case, an unknown member or invalid UTF-8 makes a
// file corrupt, not a second way to say an entry.
func (c cacheFiles) read(file string, v any) bool {
	if c.Dir == "" {
		return false
	}
	data, err := safefile.Read(file, maxCacheFile)
	return err == nil && json.Unmarshal(data, v, json.RejectUnknownMembers(true)) == nil
}

// fresh reports whether an entry made at t is younger than ttl and not
// dated in the future.
func (c cacheFiles) fresh(t time.Time, ttl time.Duration) bool {
	now := c.now()
	return !t.After(now) && now.Sub(t) < ttl
}

// write replaces file with v; what names the cache in errors. A value
// holding invalid UTF-8 (an agent's output, a path) is an error, not an
// entry: JSON cannot hold it as it is, and an entry read back must answer
// what the binary would.
func (c cacheFiles) write(file, what string, v any) error {
	if c.Dir == "" {
		return failure.New(failure.Setup, "the %s has no directory", what)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return failure.Wrap(failure.Unclassified, err, "encoding the %s", what)
	}
	if err := safefile.Write(file, data, 0o600); err != nil {
		return failure.Wrap(failure.Resource, err, "writing the %s", what)
	}
	return nil
}

// catalogCache keeps one model catalog per binary path and build.
type catalogCache struct{ cacheFiles }

// cachedCatalog is the file format. BinaryPath and Build are stored so a
// file is only trusted for the key it was written for.
type cachedCatalog struct {
	Format     int       `json:"format"`
	BinaryPath string    `json:"binaryPath"`
	Build      string    `json:"build"`
	FetchedAt  time.Time `json:"fetchedAt"`
	Models     []Model   `json:"models"`
}

const cacheFormat = 1

// file returns the cache file for a binary path and build.
func (c *catalogCache) file(binaryPath, build string) string {
	return c.path("catalog", binaryPath+"\x00"+build)
}

// Load returns the catalog cached for binaryPath and build and when it was
// fetched, or ok false when there is none that is fresh: missing, expired,
// written for another key, dated in the future, or corrupt.
func (c *catalogCache) Load(binaryPath, build string) (models []Model, fetchedAt time.Time, ok bool) {
	var cc cachedCatalog
	if !c.read(c.file(binaryPath, build), &cc) || cc.Format != cacheFormat || cc.BinaryPath != binaryPath ||
		cc.Build != build || cc.Models == nil || !c.fresh(cc.FetchedAt, catalogTTL) {
		return nil, time.Time{}, false
	}
	return cc.Models, cc.FetchedAt, true
}

// Store writes models as the catalog of binaryPath and build, fetched now.
func (c *catalogCache) Store(binaryPath, build string, models []Model) error {
	if models == nil {
		models = []Model{}
	}
	return c.write(c.file(binaryPath, build), "model catalog cache", cachedCatalog{Format: cacheFormat,
		BinaryPath: binaryPath, Build: build, FetchedAt: c.now().UTC(), Models: models})
}

// maxCachedVersionOutput bounds the --version output worth caching; a
// larger answer is not a build identifier and is simply probed again.
const maxCachedVersionOutput = 64 << 10

// versionCache remembers the --version output of binaries that answered
// it, so that a turn can skip spawning one (for the real agent a Node.js
// start); Config.ReuseVersion says who uses it.
//
// An entry is trusted only for the same file: the resolved path, its
// symlink chain, and the final target's size, modification time and (on
// POSIX) device and inode must all match what was recorded, and the entry
// must be younger than versionTTL. Only successful probes are recorded. A
// wrapper script (a .cmd shim, a shell wrapper) whose own file stays the
// same while its target is updated is the blind spot: the entry then stays
// until the TTL ends.
type versionCache struct{ cacheFiles }

// fileIdentity is what must not have changed for a cached answer to hold.
type fileIdentity struct {
	Path    string   `json:"path"`
	Links   []string `json:"links,omitempty"`
	Size    int64    `json:"size"`
	ModTime int64    `json:"modTimeNs"`
	// Dev and Ino identify the final target on POSIX; zero elsewhere.
	Dev uint64 `json:"dev,omitzero"`
	Ino uint64 `json:"ino,omitzero"`
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

// file returns the cache file for a binary path.
func (c *versionCache) file(path string) string { return c.path("version", path) }

// load returns the output cached for id and when it was probed, or ok
// false when there is no fresh entry for exactly this file: missing,
// expired, dated in the future, written for another file identity, or
// corrupt.
func (c *versionCache) load(id fileIdentity) (output string, probedAt time.Time, ok bool) {
	var cv cachedVersion
	if !c.read(c.file(id.Path), &cv) || cv.Format != versionCacheFormat || !cv.File.equal(id) ||
		cv.Output == "" || len(cv.Output) > maxCachedVersionOutput || !c.fresh(cv.ProbedAt, versionTTL) {
		return "", time.Time{}, false
	}
	return cv.Output, cv.ProbedAt, true
}

// store records output as the --version answer of the file id, probed
// now; an empty or oversized output is not kept.
func (c *versionCache) store(id fileIdentity, output []byte) error {
	if len(output) == 0 || len(output) > maxCachedVersionOutput {
		return nil
	}
	return c.write(c.file(id.Path), "version cache",
		cachedVersion{Format: versionCacheFormat, File: id, ProbedAt: c.now().UTC(), Output: string(output)})
}
