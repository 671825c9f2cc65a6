package discovery

import (
	"path"
	"slices"
	"strings"
)

// pathRules is the path syntax of one OS family. The Windows rules are
// written by hand because path/filepath follows the OS the program was built
// for, and the resolver must apply Windows rules on Linux too (tests) and
// POSIX rules on Windows (never needed, but the code stays symmetrical).
type pathRules struct {
	windows bool
}

func rulesFor(goos string) pathRules { return pathRules{windows: goos == "windows"} }

// isSep reports whether c separates path components.
func (r pathRules) isSep(c byte) bool {
	return c == '/' || (r.windows && c == '\\')
}

// hasSeparator reports whether name is a path rather than a bare name: on
// Windows it holds `\`, `/` or a drive colon; on POSIX it holds `/`.
func (r pathRules) hasSeparator(name string) bool {
	if r.windows {
		return strings.ContainsAny(name, `\/:`)
	}
	return strings.Contains(name, "/")
}

// winVolumeLen returns the length of p's volume prefix: `C:`, `\\server\share`,
// `\\?\C:`, `\\?\UNC\server\share` or `\\.\device`; 0 when p has none.
func winVolumeLen(p string) int {
	if len(p) >= 2 && p[1] == ':' && isASCIILetter(p[0]) {
		return 2
	}
	if len(p) < 2 || !isWinSep(p[0]) || !isWinSep(p[1]) {
		return 0
	}
	// \\?\ and \\.\ prefixes: a drive after them, a UNC share, or a device name.
	if len(p) >= 4 && (p[2] == '?' || p[2] == '.') && isWinSep(p[3]) {
		rest := p[4:]
		if len(rest) >= 2 && rest[1] == ':' && isASCIILetter(rest[0]) {
			return 6
		}
		if len(rest) >= 4 && strings.EqualFold(rest[:3], "UNC") && isWinSep(rest[3]) {
			return 8 + uncShareLen(rest[4:])
		}
		return 4 + componentLen(rest)
	}
	return 2 + uncShareLen(p[2:])
}

// uncShareLen returns the length of `server\share` at the start of s.
func uncShareLen(s string) int {
	server := componentLen(s)
	if server == 0 || server == len(s) {
		return server
	}
	return server + 1 + componentLen(s[server+1:])
}

func componentLen(s string) int {
	if i := strings.IndexAny(s, `\/`); i >= 0 {
		return i
	}
	return len(s)
}

func isWinSep(c byte) bool { return c == '\\' || c == '/' }

func isASCIILetter(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }

// isAbs reports whether p is absolute: on Windows a drive followed by a
// separator, or a UNC or device path; on POSIX a leading `/`.
func (r pathRules) isAbs(p string) bool {
	if !r.windows {
		return strings.HasPrefix(p, "/")
	}
	n := winVolumeLen(p)
	if n == 0 {
		return false
	}
	if n > 2 || (len(p) >= 2 && p[1] != ':') { // UNC or device
		return true
	}
	return len(p) > 2 && r.isSep(p[2])
}

// clean returns p in canonical form. On Windows: `/` becomes `\`, repeated
// separators collapse, `.` and `..` are applied (never above the volume
// root), and trailing dots and spaces are stripped from every component, as
// the Win32 path normaliser (GetFullPathNameW) does; so `x.cmd. .` becomes
// `x.cmd` and is recognised as the batch file it is. On POSIX it is
// path.Clean.
func (r pathRules) clean(p string) string {
	if !r.windows {
		return path.Clean(p)
	}
	vol := winVolumeLen(p)
	volume := strings.ReplaceAll(p[:vol], "/", `\`)
	rest := p[vol:]
	rooted := len(rest) > 0 && isWinSep(rest[0])
	var parts []string
	for _, comp := range strings.FieldsFunc(rest, func(c rune) bool { return c == '\\' || c == '/' }) {
		switch comp {
		case ".":
			continue
		case "..":
			if len(parts) > 0 && parts[len(parts)-1] != ".." {
				parts = parts[:len(parts)-1]
			} else if !rooted && vol == 0 {
				parts = append(parts, "..")
			}
			continue
		}
		if stripped := trimDotsSpaces(comp); stripped != "" {
			comp = stripped
		}
		parts = append(parts, comp)
	}
	out := volume
	if rooted || (vol > 2 && len(parts) > 0) {
		out += `\`
	}
	out += strings.Join(parts, `\`)
	if out == "" {
		return "."
	}
	return out
}

// trimDotsSpaces strips the trailing dots and spaces Win32 ignores in a name.
func trimDotsSpaces(name string) string { return strings.TrimRight(name, ". ") }

// join joins a directory and a file name.
func (r pathRules) join(dir, name string) string {
	if dir == "" {
		return name
	}
	switch {
	case r.isSep(dir[len(dir)-1]):
		return dir + name
	case r.windows:
		return dir + `\` + name
	}
	return dir + "/" + name
}

// dir returns everything before p's last separator (p's volume for a file
// at the root of one).
func (r pathRules) dir(p string) string {
	vol := 0
	if r.windows {
		vol = winVolumeLen(p)
	}
	i := len(p) - 1
	for i >= vol && !r.isSep(p[i]) {
		i--
	}
	if i < vol {
		return p[:vol]
	}
	d := p[:i]
	if len(d) <= vol { // keep the root separator
		return p[:i+1]
	}
	return d
}

// base returns p's last component.
func (r pathRules) base(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if r.isSep(p[i]) || (r.windows && p[i] == ':') {
			return p[i+1:]
		}
	}
	return p
}

// ext returns the extension of name's last component, dot included, or ""
// when it has none. On Windows trailing dots and spaces do not count.
func (r pathRules) ext(name string) string {
	b := r.base(name)
	if r.windows {
		b = trimDotsSpaces(b)
	}
	i := strings.LastIndexByte(b, '.')
	if i <= 0 && !(r.windows && i == 0) {
		return ""
	}
	return b[i:]
}

// sameDir reports whether two directories are the same: case-insensitively
// and separator-insensitively on Windows.
func (r pathRules) sameDir(a, b string) bool {
	a, b = r.clean(a), r.clean(b)
	if r.windows {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// splitList splits a PATH value into entries. On Windows, `;` separates and
// double quotes group (a quoted entry may hold `;`) and are removed, as
// cmd.exe and Go's filepath.SplitList do; on POSIX `:` separates. Empty
// entries are kept so the caller can report them.
func (r pathRules) splitList(list string) []string {
	if list == "" {
		return nil
	}
	if !r.windows {
		return strings.Split(list, ":")
	}
	var entries []string
	var b strings.Builder
	quoted := false
	for i := 0; i < len(list); i++ {
		switch c := list[i]; {
		case c == '"':
			quoted = !quoted
		case c == ';' && !quoted:
			entries = append(entries, b.String())
			b.Reset()
		default:
			b.WriteByte(c)
		}
	}
	return append(entries, b.String())
}

// parsePathExt splits a PATHEXT value into lower-case extensions, each with
// a leading dot, in order, without empties or duplicates. An empty or
// unusable value gives the Windows default .com .exe .bat .cmd.
func parsePathExt(value string) []string {
	var exts []string
	for _, e := range strings.Split(value, ";") {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" || e == "." || strings.ContainsAny(e, "\\/:\"*?<>| \t") {
			continue
		}
		if e[0] != '.' {
			e = "." + e
		}
		if !slices.Contains(exts, e) {
			exts = append(exts, e)
		}
	}
	if len(exts) == 0 {
		return []string{".com", ".exe", ".bat", ".cmd"}
	}
	return exts
}
