//go:build unix && !linux

package launch

// subreaperMode is false: only Linux has a subreaper mode here.
func subreaperMode() bool { return false }

// orphansMayRemain is false: without a subreaper no orphan of the child's
// tree is ever reparented to this process.
func (p *Process) orphansMayRemain() bool { return false }
