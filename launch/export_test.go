package launch

// Names the tests use that the package does not export.
type Proc = proc

var (
	Descendants   = descendants
	ParseProcStat = parseProcStat
)

// Root returns the child's identity as KillTree knows it: PID, parent PID
// and start time in the OS's native units.
func (p *Process) Root() Proc { return p.root }
