package probe

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/safefile"
)

// catalogTTL is how long a cached catalog is used (docs/contract.md, "Defaults").
const catalogTTL = time.Hour

// maxCacheFile bounds what the cache reads back; a larger file is corrupt.
const maxCacheFile = 4 << 20

// catalogCache keeps one model catalog per binary path and build, as JSON
// files in Dir, each replaced atomically. The zero TTL means
// catalogTTL; a nil Now means time.Now. A catalogCache is safe for
// concurrent use: files are never seen half-written and the last writer
// wins.
type catalogCache struct {
	Dir string
	TTL time.Duration
	Now func() time.Time
}

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

func (c *catalogCache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *catalogCache) ttl() time.Duration {
	if c.TTL > 0 {
		return c.TTL
	}
	return catalogTTL
}

// file returns the cache file for a binary path and build.
func (c *catalogCache) file(binaryPath, build string) string {
	sum := sha256.Sum256([]byte(binaryPath + "\x00" + build))
	return filepath.Join(c.Dir, "catalog-"+hex.EncodeToString(sum[:16])+".json")
}

// Load returns the catalog cached for binaryPath and build and when it was
// fetched, or ok false when there is none that is fresh: missing, expired,
// written for another key, dated in the future, or corrupt (a corrupt file
// is simply ignored; the next Store rewrites it).
func (c *catalogCache) Load(binaryPath, build string) (models []Model, fetchedAt time.Time, ok bool) {
	data, err := safefile.Read(c.file(binaryPath, build), maxCacheFile)
	if err != nil {
		return nil, time.Time{}, false
	}
	var cc cachedCatalog
	if err := json.Unmarshal(data, &cc); err != nil {
		return nil, time.Time{}, false
	}
	now := c.now()
	switch {
	case cc.Format != cacheFormat, cc.BinaryPath != binaryPath, cc.Build != build,
		cc.Models == nil, cc.FetchedAt.After(now), now.Sub(cc.FetchedAt) >= c.ttl():
		return nil, time.Time{}, false
	}
	return cc.Models, cc.FetchedAt, true
}

// Store writes models as the catalog of binaryPath and build, fetched now.
func (c *catalogCache) Store(binaryPath, build string, models []Model) error {
	if c.Dir == "" {
		return failure.New(failure.Setup, "the model catalog cache has no directory")
	}
	if models == nil {
		models = []Model{}
	}
	data, err := json.Marshal(cachedCatalog{Format: cacheFormat, BinaryPath: binaryPath, Build: build,
		FetchedAt: c.now().UTC(), Models: models})
	if err != nil {
		return failure.Wrap(failure.Unclassified, err, "encoding the model catalog cache")
	}
	if err := safefile.Write(c.file(binaryPath, build), data, 0o600); err != nil {
		return failure.Wrap(failure.Resource, err, "writing the model catalog cache")
	}
	return nil
}

// Remove deletes the cached catalog of binaryPath and build; a missing
// file is not an error.
func (c *catalogCache) Remove(binaryPath, build string) error {
	err := os.Remove(c.file(binaryPath, build))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return failure.Wrap(failure.Resource, err, "removing the model catalog cache")
	}
	return nil
}
