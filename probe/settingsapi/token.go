package settingsapi

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/safefile"
)

// MinTokenLen is the shortest bearer token accepted; a generated token is 64
// hex characters (32 random bytes).
const MinTokenLen = 16

// maxTokenFileBytes bounds what is read from a token file.
const maxTokenFileBytes = 4 << 10

// ValidateToken checks a bearer token: at least MinTokenLen characters of
// printable ASCII without spaces (what an Authorization header can carry).
// Its errors are of kind setup and never contain the token.
func ValidateToken(token string) error {
	if len(token) < MinTokenLen {
		return failure.New(failure.Setup, "the bearer token is shorter than %d characters", MinTokenLen)
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; c <= ' ' || c >= 0x7f {
			return failure.New(failure.Setup, "the bearer token holds a character that is not printable ASCII (at byte %d)", i)
		}
	}
	return nil
}

// NewToken returns a random token: 32 bytes from crypto/rand, hex-encoded.
func NewToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", failure.Wrap(failure.Setup, err, "generating a bearer token")
	}
	return hex.EncodeToString(b[:]), nil
}

// LoadOrCreateTokenFile returns the token stored in path, creating the file
// (mode 0600, parent directories 0700) with a NewToken when it does not
// exist; created reports that. The file's content is the token, surrounding
// whitespace ignored.
//
// An existing file is read like every operator-named file (never blocking,
// a regular file after following links, at most 4 KiB). On POSIX one owned
// by another user than the running one (root aside), or that the group or
// others may read or write, is refused (kind setup), as ssh refuses such
// keys: a token another user can read or replace protects nothing. On
// Windows neither the owner nor the ACL is inspected; a file created here
// inherits the user profile's ACL, so keep it under the profile.
func LoadOrCreateTokenFile(path string) (token string, created bool, err error) {
	if path == "" {
		return "", false, failure.New(failure.Input, "the token file path is empty")
	}
	token, err = readTokenFile(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return token, false, err
	}
	token, err = NewToken()
	if err != nil {
		return "", false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, failure.Wrap(failure.Setup, err, "creating the token file's directory")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		// Another process created it between our read and create: use
		// theirs. Still missing, the name is a link to a missing file
		// (O_EXCL never follows one).
		token, err = readTokenFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return "", false, failure.New(failure.Setup, "the token file %s is a symbolic link to a file that does not exist", path)
		}
		return token, false, err
	}
	if err != nil {
		return "", false, failure.Wrap(failure.Setup, err, "creating the token file")
	}
	_, werr := io.WriteString(f, token+"\n")
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = os.Remove(path)
		return "", false, failure.Wrap(failure.Setup, err, "writing the token file")
	}
	return token, true, nil
}

// readTokenFile reads and validates an existing token file: opened without
// blocking, a regular file (symbolic links followed) that checkPrivate
// accepts, at most maxTokenFileBytes. A missing file's error satisfies
// errors.Is(err, fs.ErrNotExist).
func readTokenFile(path string) (string, error) {
	data, err := safefile.ReadChecked(path, maxTokenFileBytes, func(info fs.FileInfo) error {
		return checkPrivate(path, info)
	})
	var fe *failure.Error
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", err
	case errors.As(err, &fe):
		return "", err // checkPrivate's refusal
	case err != nil:
		return "", failure.Wrap(failure.Setup, err, "cannot read the token file")
	}
	token := strings.TrimSpace(string(data))
	if err := ValidateToken(token); err != nil {
		return "", failure.Wrap(failure.Setup, err, "the token file %s", path)
	}
	return token, nil
}
