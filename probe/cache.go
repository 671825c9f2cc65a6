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
)

// DefaultCatalogTTL is how long a cached catalog is used (SPEC.md's 1 h).
const DefaultCatalogTTL = time.Hour

// maxCacheFile bounds what the cache reads back; a larger file is corrupt.
const maxCacheFile = 4 << 20

// CatalogCache keeps one model catalog per binary path and build, as JSON
// files in Dir, each replaced atomically. The zero TTL means
// DefaultCatalogTTL; a nil Now means time.Now. A CatalogCache is safe for
// concurrent use: files are never seen half-written and the last writer
// wins.
type CatalogCache struct {
	Dir string
	TTL time.Duration
	Now func() time.Time
}

// DefaultCatalogCacheDir returns <user cache dir>/cursorkit/models.
func DefaultCatalogCacheDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", failure.Wrap(failure.Setup, err, "no user cache directory for the model catalog")
	}
	return filepath.Join(dir, "cursorkit", "models"), nil
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

func (c *CatalogCache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *CatalogCache) ttl() time.Duration {
	if c.TTL > 0 {
		return c.TTL
	}
	return DefaultCatalogTTL
}

// file returns the cache file for a binary path and build.
func (c *CatalogCache) file(binaryPath, build string) string {
	sum := sha256.Sum256([]byte(binaryPath + "\x00" + build))
	return filepath.Join(c.Dir, "catalog-"+hex.EncodeToString(sum[:16])+".json")
}

// Load returns the catalog cached for binaryPath and build and when it was
// fetched, or ok false when there is none that is fresh: missing, expired,
// written for another key, dated in the future, or corrupt (a corrupt file
// is simply ignored; the next Store rewrites it).
func (c *CatalogCache) Load(binaryPath, build string) (models []Model, fetchedAt time.Time, ok bool) {
	data, err := readFile(c.file(binaryPath, build))
	if err != nil || len(data) > maxCacheFile {
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
func (c *CatalogCache) Store(binaryPath, build string, models []Model) error {
	if c.Dir == "" {
		return failure.New(failure.Setup, "the model catalog cache has no directory")
	}
	if models == nil {
		models = []Model{}
	}
	data, err := json.Marshal(cachedCatalog{Format: cacheFormat, BinaryPath: binaryPath, Build: build,
		FetchedAt: c.now().UTC(), Models: models})
	if err != nil {
		return failure.Wrap(failure.Other, err, "encoding the model catalog cache")
	}
	if err := writeFileAtomic(c.file(binaryPath, build), data, 0o600); err != nil {
		return failure.Wrap(failure.Resource, err, "writing the model catalog cache")
	}
	return nil
}

// Remove deletes the cached catalog of binaryPath and build; a missing
// file is not an error.
func (c *CatalogCache) Remove(binaryPath, build string) error {
	err := os.Remove(c.file(binaryPath, build))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return failure.Wrap(failure.Resource, err, "removing the model catalog cache")
	}
	return nil
}
