//go:build !unix

package settingsapi

import "io/fs"

// checkPrivate accepts any regular file: Windows permissions are ACLs,
// which the file mode does not describe, and neither the owner nor the ACL
// is inspected; a file created here inherits its directory's ACL
// (docs/contract.md, "The settings validation endpoint").
func checkPrivate(string, fs.FileInfo) error { return nil }
