//go:build !unix

package settingsapi

import "io/fs"

// checkPrivate accepts any file: Windows permissions are ACLs, which the
// file mode does not describe; the file inherits its directory's ACL.
func checkPrivate(string, fs.FileInfo) error { return nil }
