package launch

import (
	"bytes"
	"errors"
	"strconv"
)

var errBadStat = errors.New("malformed /proc/<pid>/stat")

// ParseProcStat parses a Linux /proc/<pid>/stat line into a Proc: the PID,
// the parent PID, the process group and the start time in clock ticks since
// boot. The command name may hold spaces and parentheses, so the fields are
// counted from the last ')'.
func ParseProcStat(data []byte) (Proc, error) {
	open := bytes.IndexByte(data, '(')
	closing := bytes.LastIndexByte(data, ')')
	if open <= 0 || closing < open {
		return Proc{}, errBadStat
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(data[:open])))
	if err != nil || pid <= 0 {
		return Proc{}, errBadStat
	}
	fields := bytes.Fields(data[closing+1:])
	// fields[0] is the state (field 3); starttime is field 22.
	const ppidField, pgrpField, startField = 1, 2, 19
	if len(fields) <= startField {
		return Proc{}, errBadStat
	}
	ppid, err := strconv.Atoi(string(fields[ppidField]))
	if err != nil || ppid < 0 {
		return Proc{}, errBadStat
	}
	pgrp, err := strconv.Atoi(string(fields[pgrpField]))
	if err != nil || pgrp < 0 {
		return Proc{}, errBadStat
	}
	start, err := strconv.ParseUint(string(fields[startField]), 10, 64)
	if err != nil {
		return Proc{}, errBadStat
	}
	return Proc{Pid: pid, PPid: ppid, Group: pgrp, StartTime: start}, nil
}
